"""The Ray backend on a real two-node Ray cluster: every protocol, a driver killed mid-run, and its resume.

The module starts one cluster (a head and a second node, one CPU each, no dashboard, no usage stats)
with ``ray start`` on 127.0.0.1, as a user would on two machines; the drivers are ``cubebench run ...
--backend ray --ray-address 127.0.0.1:PORT`` subprocesses.  For each protocol (an episode suite, a
question suite climbing Inf-Bench ladders, a multi-agent suite) the driver is killed with ``kill -9``
while Ray tasks are in flight, ``cubebench run --resume RUN --backend ray`` finishes the run, and the
run must hold exactly the records of the same suite played inline without interruption (same keys,
same records but for wall-clock times), each stored once.  The test also checks that both nodes
played tasks and that every process of the cluster and the driver listens and connects on loopback only.

Loopback, measured with Ray 2.60 (docs/runner.md, "Running on a cluster"): Ray binds its servers to
all interfaces unless the node's address is 127.0.0.1 (measured: 127.0.0.2 binds ``*``), and ``ray start`` turns a
given 127.0.0.1 into the machine's interface address (``resolve_ip_for_localhost``) unless
``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0``, which in turn makes a second node refuse to join.  So the
nodes are started by Ray's own ``ray start`` command line with that one rewrite turned off
(``RAY_START``), and the drivers run with ``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0`` (in a driver it only
keeps the address 127.0.0.1 as given).  Each node is started in its own process group, and the finalizer kills exactly
those groups: ``ray stop --force`` would kill every Ray process of the user on the machine.

A Ray worker killed mid-episode
(the episode kills its own worker process) is played again, or, dying on every try, ends the session in one
line and leaves the episode to the resume.  A run started inline with ``--limit`` resumes on the cluster with ``--resume RUN --backend ray
--ray-address ADDR``.  A last test (``slow``) runs ``--backend ray`` without an address: Ray starts a local cluster for the
driver, and nothing of it may outlive the driver.

Time (2 shared cores): the cluster starts in ≈ 20-30 s, each protocol takes 20-55 s (each driver is a
new Ray job, whose tasks start fresh worker processes that import cubebench); the episode case runs by
default, the question and multi-agent cases and the local cluster are ``slow``.

Each driver holds still after ``HANG_AFTER`` records are stored (its ``add_episode`` waits, with Ray
tasks in flight) and marks that it does: the kill lands mid-run, never after the run has ended.
"""

from __future__ import annotations

import ipaddress
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import pytest

from helpers import needs, comparable_records
from cubebench.runner.cli import main
from cubebench.runner.store import open_run

pytestmark = [
    needs("ray"),
    pytest.mark.skipif(not sys.platform.startswith("linux"),
                       reason="Ray supports multi-node clusters on Linux only (and the checks read /proc)"),
]

RAY_START = ("import sys\n"
             "import ray._private.services as services\n"
             "services.resolve_ip_for_localhost = lambda host: host  # keep 127.0.0.1: bind the node to loopback\n"
             "from ray.scripts.scripts import main\n"
             "sys.argv[0] = 'ray'\n"
             "sys.exit(main())\n")
"""``ray start`` (Ray's own CLI), with the rewrite of 127.0.0.1 to the interface address turned off."""

HANG_AFTER = 2

DRIVER = """
import os, sys, time
from pathlib import Path
from cubebench.runner import store

add_episode = store.RunStore.add_episode

def add_then_hold(self, spec, record):
    add_episode(self, spec, record)
    if len(self.finished_keys()) >= int(os.environ["HANG_AFTER"]):  # Ray tasks in flight: hold for the kill
        Path(os.environ["MARK"]).touch()
        while True:
            time.sleep(0.1)

store.RunStore.add_episode = add_then_hold
from cubebench.runner.cli import main
sys.exit(main(sys.argv[1:]))
"""

PROTOCOLS = {
    "episodes": ["--suite", "smoke", "--tiers", "symbolic,face", "--depths", "1,3", "--distance-budget", "0"],
    "questions": ["--suite", "inf-bench-smoke", "--tests", "inf-forward"],  # ladders: planned as they climb
    "multi": ["--suite", "multi-smoke"],
}


# --- the cluster ------------------------------------------------------------------------------
@dataclass
class Cluster:
    address: str
    groups: list[int]
    """The process group of each node (its ``ray start`` and every process it started)."""
    temp_dirs: list[Path]
    token: str

    def driver_env(self) -> dict[str, str]:
        return {**_ray_env(self.token), "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0"}

    def pids(self) -> set[int]:
        return _members(self.groups)

    def tasks_played(self) -> list[int]:
        """How many ``play_in_worker`` tasks each node's workers started (Ray marks each in the worker's log)."""
        return [sum(log.read_text(errors="replace").count(":task_name:play_in_worker")
                    for log in temp.glob("session_*/logs/worker-*.out")) for temp in self.temp_dirs]


def _free_port() -> int:
    with closing(socket.socket()) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _ray_env(token: str) -> dict[str, str]:
    """The environment of every Ray process and driver here: no RAY_ variable of the caller's, no usage stats,
    and Ray's token authentication with this test's own token (Ray 2.60 turns token authentication on for a
    ``ray start --head`` once ``~/.ray/auth_token`` exists, e.g. after any local ``ray.init()``, but not for a
    joining node: the mode is set explicitly, and nothing is read from or written to ``~/.ray``)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}
    return {**env, "RAY_USAGE_STATS_ENABLED": "0", "RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": token,
            "OMP_NUM_THREADS": "1"}


def _ray_start(args: list[str], temp_dir: Path, groups: list[int], token: str) -> None:
    """Start one node in a new process group (recorded in ``groups`` before anything can fail)."""
    env = _ray_env(token)
    proc = subprocess.Popen([sys.executable, "-c", RAY_START, "start", *args, "--node-ip-address=127.0.0.1",
                             "--num-cpus=1", "--disable-usage-stats", f"--temp-dir={temp_dir}",
                             f"--dashboard-agent-listen-port={_free_port()}"],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)
    groups.append(proc.pid)
    out, _ = proc.communicate(timeout=240)
    if proc.returncode != 0:
        raise RuntimeError(f"ray start {' '.join(args)} failed ({proc.returncode}):\n{out[-3000:]}")


def _members(groups: list[int]) -> set[int]:
    """The live processes of the given process groups (from /proc)."""
    found = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if fields[0] != "Z" and int(fields[2]) in groups:
            found.add(int(stat.parent.name))
    return found


def _stop(groups: list[int]) -> None:
    for group in groups:
        try:
            os.killpg(group, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    deadline = time.monotonic() + 30
    while _members(groups) and time.monotonic() < deadline:
        time.sleep(0.1)


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    root = Path(tempfile.mkdtemp(prefix="cbray-"))  # short: Ray's unix socket paths must fit in 107 bytes
    groups: list[int] = []
    token = secrets.token_hex(32)
    try:
        port = _free_port()
        _ray_start(["--head", f"--port={port}", "--include-dashboard=false"], root / "head", groups, token)
        _ray_start([f"--address=127.0.0.1:{port}"], root / "node", groups, token)
        yield Cluster(f"127.0.0.1:{port}", groups, [root / "head", root / "node"], token)
    finally:
        _stop(groups)
        shutil.rmtree(root, ignore_errors=True)


# --- sockets ----------------------------------------------------------------------------------
def _ip(hex_address: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address:
    raw = bytes.fromhex(hex_address)
    if len(raw) == 4:
        return ipaddress.IPv4Address(raw[::-1])
    v6 = ipaddress.IPv6Address(b"".join(raw[i:i + 4][::-1] for i in range(0, 16, 4)))
    return v6.ipv4_mapped or v6


def _sockets(pids: set[int]) -> list[tuple[int, str, str, str, str]]:
    """``(pid, protocol, state, local address, remote address)`` of every inet socket the processes hold."""
    owner: dict[str, int] = {}
    for pid in pids:
        try:
            for fd in Path(f"/proc/{pid}/fd").iterdir():
                target = os.readlink(fd)
                if target.startswith("socket:["):
                    owner[target[8:-1]] = pid
        except OSError:  # gone meanwhile
            continue
    found = []
    for proto in ("tcp", "tcp6", "udp", "udp6"):
        for line in Path(f"/proc/net/{proto}").read_text().splitlines()[1:]:
            fields = line.split()
            local, remote, state, inode = fields[1], fields[2], fields[3], fields[9]
            if inode in owner:
                found.append((owner[inode], proto, state, str(_ip(local.split(":")[0])), str(_ip(remote.split(":")[0]))))
    return found


def _not_loopback(pids: set[int]) -> list[tuple[int, str, str, str, str]]:
    """Sockets bound to, or connected to, an address other than loopback."""
    bad = []
    for sock in _sockets(pids):
        local, remote = ipaddress.ip_address(sock[3]), ipaddress.ip_address(sock[4])
        if not local.is_loopback or not (remote.is_loopback or remote.is_unspecified):
            bad.append(sock)
    return bad


# --- runs -------------------------------------------------------------------------------------

def _keys(db: Path) -> tuple[list[str], list[str]]:
    """The plan's keys in order, and the stored episodes' keys in storage order (each row once)."""
    with open_run(db) as store:
        plan = [spec.key for spec in store.plan()]
        stored = [row[0] for row in store.db.execute("SELECT key FROM episodes ORDER BY rowid")]
    return plan, stored


@pytest.mark.timeout(600)
def test_the_cluster_is_two_nodes_on_loopback(cluster: Cluster) -> None:
    probe = ("import json, ray\n"
             f"ray.init(address={cluster.address!r}, include_dashboard=False)\n"
             "print(json.dumps([[n['NodeManagerAddress'], n['Alive'], n['Resources'].get('CPU')] for n in ray.nodes()]))\n"
             "ray.shutdown()\n")
    out = subprocess.run([sys.executable, "-c", probe], env=cluster.driver_env(), capture_output=True, text=True,
                         timeout=240)
    assert out.returncode == 0, out.stderr[-3000:]
    assert json.loads(out.stdout.strip().splitlines()[-1]) == [["127.0.0.1", True, 1.0]] * 2
    assert _not_loopback(cluster.pids()) == []
    assert any(sock[2] == "0A" for sock in _sockets(cluster.pids()))  # it listens (so the check above saw sockets)


@pytest.mark.timeout(900)
@pytest.mark.parametrize("protocol", ["episodes", *(pytest.param(p, marks=[pytest.mark.slow, pytest.mark.ci])
                                                    for p in ("questions", "multi"))])
def test_a_driver_killed_mid_run_resumes_to_the_inline_run(cluster: Cluster, tmp_path: Path, protocol: str) -> None:
    suite = PROTOCOLS[protocol]
    inline, remote, mark = tmp_path / "inline.sqlite", tmp_path / "ray.sqlite", tmp_path / "under-way"
    assert main(["run", *suite, "--agent", "random", "--out", str(inline), "--no-progress", "--quiet"]) == 0
    played_before = cluster.tasks_played()

    (tmp_path / "driver.py").write_text(DRIVER)
    env = {**cluster.driver_env(), "MARK": str(mark), "HANG_AFTER": str(HANG_AFTER)}
    driver = subprocess.Popen([sys.executable, str(tmp_path / "driver.py"), "run", *suite, "--agent", "random",
                               "--backend", "ray", "--ray-address", cluster.address, "--concurrency", "2",
                               "--out", str(remote), "--no-progress", "--quiet"],
                              env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 400
        while not mark.exists():
            if driver.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"the driver ended before it was under way: {driver.stderr.read().decode()[-3000:]}")
            time.sleep(0.05)
        assert _not_loopback(cluster.pids() | {driver.pid}) == []  # the driver, mid-run, as well
    finally:
        driver.send_signal(signal.SIGKILL)
        driver.wait(timeout=60)
    assert driver.returncode == -signal.SIGKILL
    plan, stored = _keys(remote)
    assert len(stored) == HANG_AFTER < len(plan)

    resumed = subprocess.run([sys.executable, "-m", "cubebench.runner", "run", "--resume", str(remote), "--backend", "ray", "--no-progress",
                              "--quiet"], env=cluster.driver_env(), capture_output=True, text=True, timeout=600)
    assert resumed.returncode == 0, resumed.stderr[-3000:]

    plan, stored = _keys(remote)
    assert plan == _keys(inline)[0]  # the same plan (a ladder's rounds included)
    assert sorted(stored) == sorted(set(stored)) == sorted(plan)  # nothing lost, nothing stored twice
    assert comparable_records(remote) == comparable_records(inline)  # nothing changed
    with open_run(remote) as store:
        assert store.get_meta("config")["backend"] == "ray"
        assert [s["outcome"] for s in store.sessions()] == [None, "complete"]  # killed, then resumed
        assert store.retired_count() == store.damaged_count() == 0
    assert all(after > before for before, after in zip(played_before, cluster.tasks_played())), \
        (played_before, cluster.tasks_played())  # both nodes played


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_a_run_started_inline_resumes_on_the_cluster_it_names(cluster: Cluster, tmp_path: Path) -> None:
    """``--resume RUN --backend ray --ray-address ADDR`` plays the rest on that cluster (how a run moves to, or
    back onto, a cluster: the stored backend and address are the run's own, the resume's apply to its session)."""
    suite = ["--suite", "smoke", "--tiers", "symbolic", "--depths", "1,3", "--distance-budget", "0", "--agent", "random"]
    inline, moved = tmp_path / "inline.sqlite", tmp_path / "moved.sqlite"
    assert main(["run", *suite, "--out", str(inline), "--no-progress", "--quiet"]) == 0
    assert main(["run", *suite, "--out", str(moved), "--limit", "3", "--no-progress", "--quiet"]) == 0
    played_before = sum(cluster.tasks_played())
    resumed = subprocess.run([sys.executable, "-m", "cubebench.runner", "run", "--resume", str(moved), "--backend", "ray",
                              "--ray-address", cluster.address, "--concurrency", "2", "--no-progress", "--quiet"],
                             env=cluster.driver_env(), capture_output=True, text=True, timeout=500)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    plan, stored = _keys(moved)
    assert sorted(stored) == sorted(set(stored)) == sorted(plan)
    assert comparable_records(moved) == comparable_records(inline)
    assert sum(cluster.tasks_played()) > played_before  # played on the cluster (the inline part was not)
    with open_run(moved) as store:
        assert store.get_meta("config")["backend"] == "local"


DYING = """
import os, signal, sys
from pathlib import Path
from cubebench.runner import backends

play = backends.play_in_worker
DIE_ON, TRIES, DIE_TIMES = os.environ["DIE_ON"], os.environ["TRIES"], int(os.environ["DIE_TIMES"])  # the driver's

def play_or_die(ep, agent_spec, settings):  # pickled by value, with the globals above: runs in the Ray worker
    if ep.key == DIE_ON:
        tries = Path(TRIES)
        with tries.open("a") as f:
            f.write("x")
        if len(tries.read_text()) <= DIE_TIMES:
            os.kill(os.getpid(), signal.SIGKILL)  # the worker process dies mid-episode
    return play(ep, agent_spec, settings)

backends.play_in_worker = play_or_die
from cubebench.runner.cli import main
sys.exit(main(sys.argv[1:]))
"""


@pytest.mark.timeout(900)
@pytest.mark.parametrize("die_times", [1, pytest.param(99, marks=pytest.mark.slow)])
def test_an_episode_whose_ray_worker_dies_is_played_again_or_left_for_the_resume(cluster: Cluster, tmp_path: Path,
                                                                                die_times: int) -> None:
    """A worker process killed mid-episode: Ray plays the episode again (``RAY_RETRIES``); a worker that dies on
    every try ends the session in one line (exit 1) with every finished episode stored and nothing half-played,
    and the resume finishes the run to the inline run's records."""
    from cubebench.runner.backends import RAY_RETRIES

    assert RAY_RETRIES >= 1  # a worker lost once costs the episode one more try, not the session
    suite = ["--suite", "smoke", "--tiers", "symbolic", "--depths", "1,3", "--distance-budget", "0", "--agent", "random"]
    inline, remote, tries = tmp_path / "inline.sqlite", tmp_path / "ray.sqlite", tmp_path / "tries"
    assert main(["run", *suite, "--out", str(inline), "--no-progress", "--quiet"]) == 0
    victim = _keys(inline)[0][4]
    (tmp_path / "driver.py").write_text(DYING)
    env = {**cluster.driver_env(), "DIE_ON": victim, "TRIES": str(tries), "DIE_TIMES": str(die_times)}
    done = subprocess.run([sys.executable, str(tmp_path / "driver.py"), "run", *suite, "--backend", "ray",
                           "--ray-address", cluster.address, "--concurrency", "2", "--out", str(remote),
                           "--no-progress", "--quiet"], env=env, capture_output=True, text=True, timeout=600)
    plan, stored = _keys(remote)
    assert sorted(stored) == sorted(set(stored))  # each stored once
    if die_times <= RAY_RETRIES:
        assert done.returncode == 0, done.stderr[-3000:]
        assert len(tries.read_text()) == die_times + 1  # died, then played to its end
    else:
        assert done.returncode == 1, done.stderr[-3000:]
        last = done.stderr.strip().splitlines()[-1]
        assert last.startswith(f"cubebench: error: the Ray worker playing {victim} died {RAY_RETRIES + 1} times"), last
        assert f"resume with `cubebench run --resume {remote}`" in last and "Traceback" not in done.stderr
        assert len(tries.read_text()) == RAY_RETRIES + 1
        assert victim not in stored
        with open_run(remote) as store:
            assert store.sessions()[-1]["outcome"].startswith("failed: the Ray worker playing")
            stored_records = dict(store.records())
        assert all(stored_records[k].to_dict()["steps"] for k in stored)  # only whole records
        resumed = subprocess.run([sys.executable, "-m", "cubebench.runner", "run", "--resume", str(remote),
                                  "--no-progress", "--quiet"], env=cluster.driver_env(), capture_output=True,
                                 text=True, timeout=600)
        assert resumed.returncode == 0, resumed.stderr[-3000:]
    plan, stored = _keys(remote)
    assert sorted(stored) == sorted(set(stored)) == sorted(plan)
    assert comparable_records(remote) == comparable_records(inline)


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_without_an_address_the_driver_starts_a_local_cluster_and_leaves_nothing_running(tmp_path: Path) -> None:
    """``--backend ray`` without ``--ray-address``: Ray starts a one-machine cluster for the run and stops
    it when the driver exits (``RAY_ADDRESS=local``: never another cluster found on the machine)."""
    suite = ["--suite", "smoke", "--tiers", "symbolic", "--depths", "1,3", "--distance-budget", "0"]
    inline, remote = tmp_path / "inline.sqlite", tmp_path / "ray.sqlite"
    assert main(["run", *suite, "--agent", "random", "--out", str(inline), "--no-progress", "--quiet"]) == 0
    ray_tmp = Path(tempfile.mkdtemp(prefix="cbray-"))  # Ray's files, not /tmp/ray (short: unix socket paths)
    env = {**_ray_env(secrets.token_hex(32)), "RAY_ADDRESS": "local", "RAY_TMPDIR": str(ray_tmp),
           "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0"}
    driver = subprocess.Popen([sys.executable, "-m", "cubebench.runner", "run", *suite, "--agent", "random",
                               "--backend", "ray", "--concurrency", "2", "--out", str(remote), "--no-progress",
                               "--quiet"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                              start_new_session=True)
    try:
        _, err = driver.communicate(timeout=500)
        assert driver.returncode == 0, err.decode()[-3000:]
        deadline = time.monotonic() + 30
        while _members([driver.pid]) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert _members([driver.pid]) == set()  # the local cluster is gone with its driver
    finally:
        _stop([driver.pid])
        shutil.rmtree(ray_tmp, ignore_errors=True)
    assert comparable_records(remote) == comparable_records(inline)
