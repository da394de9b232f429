"""The CodeAct sandbox: functional tests and a battery of hostile programs.

Every hostile test checks two things: the program is stopped (or made harmless)
with an observation that says what happened, and the episode goes on afterwards
(the host is untouched, ``1+1`` answers ``2`` and the tool stubs still work).
The sandbox must be able to activate its fairness layers here (Linux, root, mount
and network namespaces): these tests prove that in the *basic* tool setting the
model's code can reach neither a solver nor the project's files.
"""
from __future__ import annotations

import json
import os
import select
import shlex
import shutil
import socket
import subprocess
import sys
import threading
import time
import uuid
import warnings
from pathlib import Path
from typing import Any

import pytest

from cubebench.agents.sandbox import (ALL_LAYERS, FAIRNESS_LAYERS, ExecResult, Sandbox, SandboxError,
                            SandboxLimits, SandboxUnavailable)

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the sandbox needs Linux")

KiB, MiB = 1024, 1024 * 1024
PROJECT = Path(__file__).resolve().parents[2]
LIMITS = SandboxLimits(cpu_seconds=2, wall_seconds=3, kill_grace_seconds=0.5, memory_bytes=192 * MiB,
                       max_output_chars=500, file_size_bytes=64 * KiB, disk_bytes=1 * MiB,
                       max_files=64, max_open_files=32)
# Short wall limit for the tests that are meant to hit it; generous one for CPU tests
# (this machine is shared: a CPU second can take several wall seconds).
WALL = SandboxLimits(**{**LIMITS.__dict__, "wall_seconds": 1.0})
CPU = SandboxLimits(**{**LIMITS.__dict__, "cpu_seconds": 1, "wall_seconds": 30.0})
SOLVED = "UUUUUUUUURRRRRRRRRFFFFFFFFFDDDDDDDDDLLLLLLLLLBBBBBBBBB"


class ToolBox:
    """Host-side tools with a log of every call that really ran."""

    def __init__(self) -> None:
        self.state = SOLVED
        self.executed: list[tuple[str, Any]] = []

    def move(self, seq: str) -> str:
        """Apply a move sequence (the test only records it)."""
        self.executed.append(("move", seq))
        return f"applied {len(seq.split())} moves"

    def observe(self) -> str:
        """The current facelet string."""
        self.executed.append(("observe", None))
        return self.state

    def solve(self, facelets: str) -> str:
        """Fail like the engine's validation does on a bad string."""
        self.executed.append(("solve", facelets))
        if len(facelets) != 54:
            raise ValueError(f"a facelet string has 54 characters, got {len(facelets)}")
        return "R U R' U'"

    def info(self) -> dict[str, Any]:
        self.executed.append(("info", None))
        return {"depth": 3, "moves": ["R", "U"], "solved": False}

    def bad(self) -> object:
        self.executed.append(("bad", None))
        return object()

    def slow(self, seconds: float) -> str:
        import time
        time.sleep(seconds)
        self.executed.append(("slow", seconds))
        return "slept"

    def tools(self) -> dict[str, Any]:
        return {n: getattr(self, n) for n in ("move", "observe", "solve", "info", "bad", "slow")}


@pytest.fixture
def box() -> ToolBox:
    return ToolBox()


def make(box: ToolBox, limits: SandboxLimits = LIMITS, **kw: Any) -> Sandbox:
    kw.setdefault("require_layers", FAIRNESS_LAYERS)
    return Sandbox(box.tools(), limits, **kw)


@pytest.fixture
def sb(box: ToolBox):
    with make(box) as sandbox:
        yield sandbox


@pytest.fixture(scope="module")
def episode():
    """One interpreter facing many hostile blocks in a row, as in a real episode (used by
    the tests whose programs leave the interpreter alive)."""
    tools = ToolBox()
    with make(tools) as sandbox:
        yield sandbox, tools


def goes_on(sb: Sandbox, box: ToolBox) -> None:
    """The episode continues: plain code runs and the tool stubs still reach the host."""
    assert sb.run("1+1").value_repr == "2"
    before = len(box.executed)
    r = sb.run("observe()")
    assert r.value_repr == repr(SOLVED), r.observation()
    assert box.executed[before:] == [("observe", None)]


def assert_error(r: ExecResult, *needles: str) -> None:
    """The block failed with a traceback containing every needle, shown to the model."""
    assert r.error is not None, r.observation()
    for needle in needles:
        assert needle in r.error and needle in r.observation(), r.observation()


# =========================================================================== functional

def test_all_layers_active_here(sb: Sandbox) -> None:
    assert set(sb.active_layers) >= set(ALL_LAYERS), sb.describe()
    text = sb.describe()
    for name in ALL_LAYERS:
        assert f"- {name}: active" in text
    info = sb.interpreter_info
    assert info["uid"] == sb.uid != 0 and info["pid"] == 1 and info["cwd"] == "/work"
    assert all(p.startswith("/python/") for p in info["path"])


def test_host_view_of_the_interpreter_confirms_the_layers(sb: Sandbox) -> None:
    """Checked from outside, in /proc of the host, not from what the sandbox says of itself."""
    pid = sb._session.child_pid
    for ns in ("mnt", "net", "pid", "ipc", "uts"):
        assert os.readlink(f"/proc/{pid}/ns/{ns}") != os.readlink(f"/proc/self/ns/{ns}"), ns
    status = dict(line.split(":\t", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines()
                  if ":\t" in line)
    assert status["Uid"].split() == [str(sb.uid)] * 4 and status["Gid"].split() == [str(sb.uid)] * 4
    assert status["Groups"].strip() == "" and int(status["CapEff"], 16) == 0 and int(status["CapPrm"], 16) == 0
    assert status["NoNewPrivs"].strip() == "1" and status["Seccomp"].strip() == "2"
    assert int(status["Seccomp_filters"]) == 2  # the base filter and the no-exec filter
    seen_root = set(os.listdir(f"/proc/{pid}/root"))  # the interpreter's "/" seen through its root link
    assert "python" in seen_root and seen_root <= {"dev", "python", "work", "lib64", "lib", "usr"}
    limits = Path(f"/proc/{pid}/limits").read_text()
    assert f"{192 * MiB}" in limits.split("Max address space")[1].splitlines()[0]


def test_variables_functions_and_imports_persist(sb: Sandbox) -> None:
    assert sb.run("import math\nx = 20\ndef double(v):\n    return 2 * v").value_repr is None
    assert sb.run("double(x) + math.floor(1.5)").value_repr == "41"


def test_final_expression_like_a_repl(sb: Sandbox) -> None:
    assert sb.run("print('hi')\n'abc'").observation() == "hi\n'abc'"
    assert sb.run("None").value_repr is None
    assert sb.run("y = 3").observation() == "[no output]"
    assert sb.run("[1, 2][0]\nz = 5").value_repr is None  # the last statement is not an expression


def test_tool_calls_round_trip_in_order(sb: Sandbox, box: ToolBox) -> None:
    r = sb.run("a = move(\"R U R' U'\")\nb = info()\nprint(a)\nb['moves'] + [observe()[:3]]")
    assert r.error is None, r.observation()
    assert r.value_repr == "['R', 'U', 'UUU']"
    assert r.stdout == "applied 4 moves\n"
    assert [(c.name, c.args, c.result) for c in r.tool_calls] == [
        ("move", ["R U R' U'"], "applied 4 moves"),
        ("info", [], {"depth": 3, "moves": ["R", "U"], "solved": False}),
        ("observe", [], SOLVED)]
    assert [name for name, _ in box.executed] == ["move", "info", "observe"]


def test_tool_error_raises_inside_with_the_tools_message(sb: Sandbox) -> None:
    r = sb.run("try:\n    solve('UUU')\nexcept ToolError as e:\n    print('caught:', e)")
    assert r.stdout == "caught: ValueError: a facelet string has 54 characters, got 3\n"
    r = sb.run("solve(facelets='RR')")
    assert_error(r, "ToolError: ValueError: a facelet string has 54 characters, got 2")
    assert r.tool_calls[0].kwargs == {"facelets": "RR"} and r.tool_calls[0].error.startswith("ValueError")


def test_tool_results_and_arguments_must_be_json(sb: Sandbox, box: ToolBox) -> None:
    assert_error(sb.run("bad()"), "ToolError", "not a JSON value")
    r = sb.run("move(object())")
    assert_error(r, "TypeError", "must be JSON values")
    assert r.tool_calls == [] and ("move", None) not in box.executed


def test_oversized_tool_arguments_are_refused_inside(sb: Sandbox, box: ToolBox) -> None:
    sb.run("kept = 5")
    r = sb.run("move('R ' * 2_000_000)")
    assert_error(r, "ValueError", "too large")
    assert r.tool_calls == [] and not r.interpreter_lost and sb.run("kept").value_repr == "5"
    r = sb.run("move(eval('[' * 31 + ']' * 31))")
    assert_error(r, "ValueError", "nested too deeply (the limit is 30 levels")
    assert r.tool_calls == [] and not r.interpreter_lost and sb.run("kept").value_repr == "5"
    r = sb.run("move(eval('[' * 30 + ']' * 30))")  # crosses (and the toolbox's move refuses a list)
    assert [c.executed for c in r.tool_calls] == [True] and not r.interpreter_lost, r.observation()
    goes_on(sb, box)


def test_tool_docs_are_visible_inside(sb: Sandbox) -> None:
    assert "Apply a move sequence" in sb.run("move.__doc__").value_repr


def test_output_is_truncated_with_a_marker(sb: Sandbox) -> None:
    r = sb.run("print('a' * 1200)")
    assert r.stdout == "a" * 500 and r.stdout_dropped_chars == 701
    assert r.killed_reason is None
    assert "[output truncated: 701 more characters not shown]" in r.observation()


def test_tracebacks_show_no_host_paths(sb: Sandbox) -> None:
    r = sb.run("def f():\n    return {}['k']\nf()")
    assert_error(r, 'File "<cell-1>", line 3', "KeyError: 'k'")
    for host in (str(PROJECT), "agents/sandbox", "<string>", "_worker"):
        assert host not in r.error


def test_syntax_error_keeps_the_interpreter(sb: Sandbox) -> None:
    sb.run("kept = 7")
    assert_error(sb.run("def oops(:\n  pass"), "SyntaxError")
    assert sb.run("kept").value_repr == "7"


def test_fresh_interpreter_notice_after_a_crash(sb: Sandbox, box: ToolBox) -> None:
    sb.run("lost = 1")
    r = sb.run("import os\nos._exit(3)")
    assert r.interpreter_lost and r.killed_reason == "exit"
    assert "exited with status 3" in r.observation() and "restarted" in r.observation()
    r = sb.run("lost")
    assert r.fresh_interpreter and "NameError" in r.error
    assert r.observation().startswith("[Notice: the previous interpreter died")
    goes_on(sb, box)


def test_close_leaves_no_process_and_no_mount(box: ToolBox) -> None:
    fds_before = len(os.listdir("/proc/self/fd"))
    sandbox = make(box)
    launcher = sandbox._session.proc
    sandbox.run("x = 1")
    sandbox.run("import os\nos._exit(0)")  # a restart in between must not leak either
    sandbox.run("x = 2")
    sandbox.close()
    assert len(os.listdir("/proc/self/fd")) == fds_before  # pipes, memfd and pidfd all closed
    sandbox.close()  # twice is fine
    assert launcher.returncode is not None  # reaped: no zombie
    assert not _tasks_of(sandbox.uid)
    assert "sandbox-root" not in Path("/proc/self/mounts").read_text()
    with pytest.raises(SandboxError):
        sandbox.run("1")


def test_sandboxes_in_threads_are_independent(box: ToolBox) -> None:
    results: dict[int, tuple[int, str | None]] = {}

    def episode(n: int) -> None:
        with make(box) as sandbox:
            sandbox.run(f"x = {n}")
            results[n] = (sandbox.uid, sandbox.run("x * 10").value_repr)

    threads = [threading.Thread(target=episode, args=(n,)) for n in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert {n: v for n, (_, v) in results.items()} == {0: "0", 1: "10", 2: "20"}
    assert len({uid for uid, _ in results.values()}) == 3


HOST_SCRIPT = """
import sys, time
sys.path.insert(0, sys.argv[1])
from sandbox import Sandbox
sb = Sandbox({})
sb.run("x = 1")
print(sb.uid, sb._session.proc.pid, flush=True)
time.sleep(120)
"""


def test_host_death_takes_the_sandbox_down() -> None:
    host = subprocess.Popen([sys.executable, "-I", "-c", HOST_SCRIPT, str(PROJECT / "agents")],
                            stdout=subprocess.PIPE, text=True)
    try:
        uid, launcher = map(int, host.stdout.readline().split())
        assert _tasks_of(uid)
    finally:
        host.kill()
        host.wait()
        host.stdout.close()
    for _ in range(100):  # the launcher sees EOF on its stdin and kills the interpreter
        if not _tasks_of(uid) and not _alive(launcher):
            break
        time.sleep(0.1)
    assert not _tasks_of(uid) and not _alive(launcher)


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(")")[1].split()[0] != "Z"
    except OSError:
        return False


def test_mounts_do_not_leak_to_the_host(sb: Sandbox) -> None:
    assert sb.run("1").value_repr == "1"
    mounts = Path("/proc/self/mounts").read_text()
    assert "sandbox-root" not in mounts and " work tmpfs" not in mounts


def test_required_layer_missing_raises(box: ToolBox) -> None:
    with pytest.raises(SandboxUnavailable, match="mount-namespace"):
        make(box, disable_layers={"namespaces"})


def test_fallback_reports_weaker_layers_and_cleans_its_workdir(box: ToolBox) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        weak = make(box, disable_layers={"namespaces"}, require_layers=())
    with weak:
        assert "- mount-namespace: disabled by configuration" in weak.describe()
        assert {"seccomp", "rlimits", "no-new-privs"} <= set(weak.active_layers)
        # never pretend: the uid the interpreter really has matches what the layer report says
        dropped = weak.layers["unprivileged-uid"].startswith("active")
        assert weak.interpreter_info["uid"] == (weak.uid if dropped else os.geteuid())
        missing = [n for n in ALL_LAYERS if not weak.layers[n].startswith(("active", "disabled"))]
        assert all(name in str(w.message) for name in missing for w in caught) and bool(caught) == bool(missing)
        workdir = weak._session.workdir
        assert Path(workdir).is_dir() and weak.run("import os\nos.getcwd()").value_repr == repr(workdir)
    assert not Path(workdir).exists()


UNPRIVILEGED_PROBE = """
import json, sys
sys.path.insert(0, sys.argv[1])  # the sandbox package alone, imported as 'sandbox'
from sandbox import FAIRNESS_LAYERS, Sandbox, SandboxLimits
with Sandbox({"f": lambda: 7}, SandboxLimits(wall_seconds=10), require_layers=FAIRNESS_LAYERS) as sb:
    out = {"layers": sb.layers, "uid": sb.uid, "info": sb.interpreter_info,
           "probe": sb.run("import os\\n(os.getuid(), sorted(os.listdir('/')), f())").value_repr,
           "file": sb.run("open('/etc/passwd')").error, "fork": sb.run("import os\\nos.fork()").error,
           "caps": open(f"/proc/{sb._session.child_pid}/status").read()}
print(json.dumps(out))
"""


def _nobody_can_unshare() -> bool:
    if os.geteuid() != 0 or not shutil.which("su") or not Path("/usr/bin/python3").exists():
        return False
    probe = subprocess.run(["su", "nobody", "-s", "/bin/sh", "-c", "unshare -U -m -n true"],
                           capture_output=True, timeout=30, check=False)
    return probe.returncode == 0


@pytest.mark.skipif(not _nobody_can_unshare(), reason="needs root (to become nobody), su, "
                    "/usr/bin/python3 and unprivileged user namespaces")
def test_unprivileged_caller_gets_the_walls_through_a_user_namespace() -> None:
    """A non-root caller (nobody, with the system Python) still gets every fairness layer."""
    cmd = f"cd / && /usr/bin/python3 -I -c {shlex.quote(UNPRIVILEGED_PROBE)} {PROJECT / 'agents'}"
    done = subprocess.run(["su", "nobody", "-s", "/bin/sh", "-c", cmd], capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout.splitlines()[-1])
    assert out["layers"]["user-namespace"].startswith("active")
    assert out["uid"] == out["info"]["uid"] == 65534 and out["info"]["pid"] == 1
    uid, top, value = eval(out["probe"])
    assert uid == 65534 and "etc" not in top and "python" in top and value == 7
    assert "FileNotFoundError" in out["file"] and "BlockingIOError" in out["fork"]
    caps = dict(line.split(":\t") for line in out["caps"].splitlines() if ":\t" in line)
    assert int(caps["CapEff"], 16) == int(caps["CapPrm"], 16) == 0 and caps["NoNewPrivs"] == "1"


# =========================================================================== hostile: files

@pytest.mark.parametrize("path", ["/etc/passwd", "/etc/shadow", "/root/.bashrc", "/proc/self/environ",
                                  str(PROJECT / "pyproject.toml"), str(PROJECT / "cube_env" / "__init__.py"),
                                  sys.executable, str(Path.home() / ".profile")])
def test_host_files_are_invisible(episode: tuple[Sandbox, ToolBox], path: str) -> None:
    sb, box = episode
    r = sb.run(f"open({path!r}).read()")
    assert_error(r, "FileNotFoundError")
    goes_on(sb, box)


def test_parent_environ_through_proc_is_invisible(episode: tuple[Sandbox, ToolBox]) -> None:
    sb, box = episode
    assert_error(sb.run(f"open('/proc/{os.getpid()}/environ', 'rb').read()"), "FileNotFoundError")
    goes_on(sb, box)


def test_only_the_minimal_tree_is_visible(sb: Sandbox, box: ToolBox) -> None:
    r = sb.run("import os\nsorted(os.listdir('/')), sorted(os.listdir('/dev')), os.listdir('/work')")
    top, dev, work = eval(r.value_repr)
    assert set(top) <= {"dev", "python", "work", "lib64", "lib", "usr"} and "python" in top
    assert dev == ["null", "random", "urandom", "zero"] and work == []
    r = sb.run("import sys\n[(d, os.listdir(d)) for d in (sys.path[1] + '/site-packages', "
               "sys.path[1] + '/dist-packages') if os.path.isdir(d) and os.listdir(d)]")
    assert r.value_repr == "[]"  # the global site-packages, if inside the stdlib dir, is masked empty
    goes_on(sb, box)


def test_secrets_in_the_host_environment_are_invisible(box: ToolBox, monkeypatch: pytest.MonkeyPatch) -> None:
    secret = "sk-test-" + uuid.uuid4().hex
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    monkeypatch.setenv("ANTHROPIC_API_KEY", secret)
    with make(box) as sandbox:
        r = sandbox.run("import os\nsorted(os.environ), repr(dict(os.environ))")
        names, dump = eval(r.value_repr)
        assert names == ["HOME", "LANG", "LD_LIBRARY_PATH", "PATH", "TMPDIR"]
        assert secret not in dump and secret not in r.observation()
        goes_on(sandbox, box)


@pytest.mark.parametrize("module", ["cubebench", "cube_env", "numba", "numpy", "wrappers", "agents"])
def test_project_and_solver_libraries_cannot_be_imported(episode: tuple[Sandbox, ToolBox], module: str) -> None:
    sb, box = episode
    assert_error(sb.run(f"import {module}"), "ModuleNotFoundError", module)
    goes_on(sb, box)


def test_adding_the_project_to_sys_path_does_not_help(episode: tuple[Sandbox, ToolBox]) -> None:
    sb, box = episode
    venv_site = [p for p in sys.path if p.endswith("site-packages")]
    for name in ("cube_env", "agents", "cubebench"):  # the folders on the added path, and the package
        r = sb.run(f"import sys\nsys.path[:0] = {[str(PROJECT), *venv_site]!r}\nimport {name}")
        assert_error(r, "ModuleNotFoundError")
    r = sb.run("import importlib.util\n"
               f"spec = importlib.util.spec_from_file_location('k', {str(PROJECT / 'cube_env' / '__init__.py')!r})\n"
               "spec.loader.exec_module(importlib.util.module_from_spec(spec))")
    assert_error(r, "FileNotFoundError")
    goes_on(sb, box)


def test_writing_outside_the_work_dir_fails_and_the_host_is_untouched(sb: Sandbox, box: ToolBox) -> None:
    marker = f"/tmp/sandbox-escape-{uuid.uuid4().hex}"
    for target in (marker, str(PROJECT / f"PWNED-{uuid.uuid4().hex}"), "/python/lib/evil.py", "/evil"):
        r = sb.run(f"open({target!r}, 'w').write('x')")
        assert r.error and ("FileNotFoundError" in r.error or "Read-only file system" in r.error), r.error
        assert not Path(target).exists()
    r = sb.run("open('/work/ok.txt', 'w').write('fine'); open('ok.txt').read()")
    assert r.value_repr == "'fine'"
    goes_on(sb, box)


def test_huge_file_write_is_refused(sb: Sandbox, box: ToolBox) -> None:
    r = sb.run("open('big.bin', 'wb').write(b'x' * (200 * 1024))")
    assert_error(r, "File too large")
    goes_on(sb, box)


def test_filling_the_work_dir_is_refused(sb: Sandbox, box: ToolBox) -> None:
    code = ("n = 0\nwhile True:\n    with open(f'f{n}', 'wb') as f:\n        f.write(b'x' * 60000)\n"
            "    n += 1")
    assert_error(sb.run(code), "No space left on device")
    assert int(sb.run("n").value_repr) < 20  # 1 MiB of tmpfs
    goes_on(sb, box)


# =========================================================================== hostile: network

@pytest.fixture
def listener():
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    server.setblocking(False)
    yield server
    server.close()


def _no_connection(server: socket.socket) -> bool:
    return not select.select([server], [], [], 0)[0]


def test_tcp_to_a_host_port_fails(sb: Sandbox, box: ToolBox, listener: socket.socket) -> None:
    port = listener.getsockname()[1]
    r = sb.run(f"import socket\nsocket.create_connection(('127.0.0.1', {port}), timeout=1)")
    assert_error(r, "PermissionError")
    assert _no_connection(listener)
    goes_on(sb, box)


def test_network_namespace_alone_blocks_tcp(box: ToolBox, listener: socket.socket) -> None:
    port = listener.getsockname()[1]
    with make(box, disable_layers={"seccomp"}) as sandbox:
        r = sandbox.run(f"import socket\ns = socket.socket()\ns.settimeout(1)\ns.connect(('127.0.0.1', {port}))")
        assert_error(r, "Network is unreachable")
        assert _no_connection(listener)
        goes_on(sandbox, box)


# =========================================================================== hostile: processes

@pytest.mark.parametrize("code, needle", [
    ("import os\nos.fork()", "BlockingIOError"),
    ("import subprocess\nsubprocess.run(['/python/bin/python3', '-c', '1'])", "BlockingIOError"),
    ("import os\nos.execv('/python/bin/python3', ['python3', '-c', '1'])", "PermissionError"),
    ("import threading\nthreading.Thread(target=lambda: None).start()", "can't start new thread"),
    ("import resource\nresource.prlimit(0, resource.RLIMIT_NOFILE, (16, 16))", "PermissionError"),
])
def test_spawning_is_refused(episode: tuple[Sandbox, ToolBox], code: str, needle: str) -> None:
    sb, box = episode
    assert_error(sb.run(code), needle)
    goes_on(sb, box)


def test_os_system_runs_nothing(sb: Sandbox, box: ToolBox) -> None:
    marker = f"/tmp/sandbox-system-{uuid.uuid4().hex}"
    r = sb.run(f"import os\nos.system('touch {marker}')")
    assert r.value_repr not in (None, "0") and not Path(marker).exists()
    goes_on(sb, box)


def test_fork_bomb_is_contained_and_swept(box: ToolBox) -> None:
    limits = SandboxLimits(**{**WALL.__dict__, "max_processes": 4})
    with make(box, limits) as sandbox:
        r = sandbox.run("import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass")
        assert r.killed_reason in ("wall", "cpu", "background") and r.interpreter_lost, r.observation()
        assert not _tasks_of(sandbox.uid)  # the PID namespace took every child down
        goes_on(sandbox, box)


def test_background_threads_cannot_outlive_a_block(box: ToolBox) -> None:
    limits = SandboxLimits(**{**LIMITS.__dict__, "max_processes": 3})
    with make(box, limits) as sandbox:
        r = sandbox.run("import threading, time\nthreading.Thread(target=time.sleep, args=(60,)).start()")
        assert r.killed_reason == "background" and r.interpreter_lost
        assert "left 1 thread(s)" in r.observation()
        assert not _tasks_of(sandbox.uid)
        goes_on(sandbox, box)


def test_killing_the_parent_is_impossible(sb: Sandbox, box: ToolBox) -> None:
    r = sb.run("import os, signal\nppid = os.getppid()\nos.kill(ppid, signal.SIGKILL)\n"
               "try:\n    os.kill(-1, signal.SIGKILL)\nexcept OSError:\n    pass\nppid")
    assert r.value_repr == "0"  # PID 1 of its own namespace: its parent is outside it
    assert sb._session.proc.poll() is None
    goes_on(sb, box)


def test_ctypes_libc_cannot_undo_the_walls(sb: Sandbox, box: ToolBox) -> None:
    code = ("import ctypes\nlibc = ctypes.CDLL('libc.so.6', use_errno=True)\n"
            "(libc.getuid(), libc.setuid(0), libc.unshare(0x10020000), libc.chroot(b'/'),\n"
            " libc.mount(b'none', b'/work', b'proc', 0, None), libc.syscall(101, 16, 1, 0, 0))")
    uid, *rets = eval(sb.run(code).value_repr)
    assert uid == sb.uid and rets == [-1] * 5
    goes_on(sb, box)


def test_shared_memory_and_memfds_are_refused(episode: tuple[Sandbox, ToolBox]) -> None:
    """Memory the address-space limit does not count: System V shared memory (a segment outlives
    its attachment, so blocks could pile up gigabytes), semaphores, message queues, memfds and
    POSIX shared memory (no /dev/shm). Each attempt fails and obtains nothing."""
    sb, box = episode
    code = ("import ctypes, os\nlibc = ctypes.CDLL(None, use_errno=True)\n"
            "def errno_of(ret):\n    return ctypes.get_errno() if ret == -1 else 'obtained'\n"
            "def raised(fn, *args):\n    try:\n        fn(*args)\n    except OSError as exc:\n"
            "        return exc.errno\n    return 'obtained'\n"
            "from multiprocessing import shared_memory\n"
            "(errno_of(libc.shmget(0, 1 << 30, 0o1600)), errno_of(libc.shmat(0, None, 0)),\n"
            " errno_of(libc.semget(0, 1000, 0o1600)), errno_of(libc.msgget(0, 0o1600)),\n"
            " raised(os.memfd_create, 'hoard'), errno_of(libc.syscall(319, b'hoard', 0)),\n"
            " raised(shared_memory.SharedMemory, None, True, 1 << 20))")
    r = sb.run(code)
    assert r.value_repr is not None, r.observation()
    eperm, enoent = 1, 2
    assert eval(r.value_repr) == (eperm,) * 6 + (enoent,), r.value_repr
    goes_on(sb, box)


def test_ctypes_segfault_crashes_only_the_sandbox(sb: Sandbox, box: ToolBox) -> None:
    r = sb.run("import ctypes\nctypes.string_at(0)")
    assert r.killed_reason == "crash" and "SIGSEGV" in r.observation() and r.interpreter_lost
    goes_on(sb, box)


def test_subclasses_and_builtins_tricks_reach_only_the_sandbox(sb: Sandbox, box: ToolBox) -> None:
    code = ("wrap = [c for c in ().__class__.__base__.__subclasses__() if c.__name__ == '_wrap_close'][0]\n"
            "g = wrap.__init__.__globals__\n"
            "(sorted(g['listdir']('/')), g['system']('id'), g['getuid']())")
    top, status, uid = eval(sb.run(code).value_repr)
    assert "root" not in top and "etc" not in top and status != 0 and uid == sb.uid
    r = sb.run("__builtins__.__dict__['__import__']('cubebench')")
    assert_error(r, "ModuleNotFoundError")
    goes_on(sb, box)


# =========================================================================== hostile: time, memory, output

def test_cpu_busy_loop_is_interrupted_and_state_kept(box: ToolBox) -> None:
    with make(box, CPU) as sandbox:
        sandbox.run("kept = 'yes'")
        r = sandbox.run("while True:\n    pass")
        assert r.killed_reason == "cpu" and r.timed_out and not r.interpreter_lost
        assert "CpuTimeExceeded" in r.error and "CPU-time limit of 1 s" in r.observation()
        assert sandbox.run("kept").value_repr == "'yes'"
        goes_on(sandbox, box)


def test_cpu_loop_ignoring_the_interruption_is_killed(box: ToolBox) -> None:
    with make(box, CPU) as sandbox:
        r = sandbox.run("import signal\nsignal.signal(signal.SIGPROF, signal.SIG_IGN)\nwhile True:\n    pass")
        assert r.killed_reason == "cpu" and r.interpreter_lost
        assert "did not stop when interrupted" in r.observation()
        goes_on(sandbox, box)


def test_threads_spinning_are_charged_and_stopped(box: ToolBox) -> None:
    limits = SandboxLimits(**{**CPU.__dict__, "max_processes": 3})
    with make(box, limits) as sandbox:
        code = ("import threading, signal\nsignal.signal(signal.SIGPROF, signal.SIG_IGN)\n"
                "def spin():\n    while True:\n        pass\n"
                "for _ in range(2):\n    threading.Thread(target=spin, daemon=True).start()\n"
                "threading.Event().wait()")
        r = sandbox.run(code)
        assert r.killed_reason in ("cpu", "wall") and r.interpreter_lost, r.observation()
        assert not _tasks_of(sandbox.uid)
        goes_on(sandbox, box)


def test_sleeping_loop_hits_the_wall_limit(box: ToolBox) -> None:
    with make(box, WALL) as sandbox:
        sandbox.run("kept = 1")
        r = sandbox.run("import time\nwhile True:\n    time.sleep(0.05)")
        assert r.killed_reason == "wall" and r.timed_out and not r.interpreter_lost
        assert "WallTimeExceeded" in r.error and "wall-time limit of 1 s" in r.observation()
        assert sandbox.run("kept").value_repr == "1"
        goes_on(sandbox, box)


def test_ignoring_alarm_and_term_and_swallowing_the_stop_gets_killed(box: ToolBox) -> None:
    with make(box, WALL) as sandbox:
        code = ("import signal, time\nfor s in (signal.SIGALRM, signal.SIGTERM, signal.SIGINT):\n"
                "    signal.signal(s, signal.SIG_IGN)\n"
                "while True:\n    try:\n        time.sleep(0.05)\n    except BaseException:\n        pass")
        r = sandbox.run(code)
        assert r.killed_reason == "wall" and r.interpreter_lost
        assert "killed" in r.observation() and "restarted" in r.observation()
        goes_on(sandbox, box)


def test_output_printed_before_a_kill_is_kept(box: ToolBox) -> None:
    with make(box, WALL) as sandbox:
        code = ("import signal, time\nsignal.signal(signal.SIGALRM, signal.SIG_IGN)\n"
                "print('step 1 done')\nprint(observe()[:4])\ntime.sleep(0.3)\nprint('step 2 done')\n"
                "while True:\n    time.sleep(0.05)")
        r = sandbox.run(code)
        assert r.interpreter_lost and r.killed_reason == "wall"
        assert r.stdout == "step 1 done\nUUUU\nstep 2 done\n"
        assert r.observation().startswith("step 1 done\nUUUU\nstep 2 done\n[Stopped:")
        goes_on(sandbox, box)


def test_no_tool_call_runs_after_the_time_limit(box: ToolBox) -> None:
    with make(box, WALL) as sandbox:
        r = sandbox.run("import signal, time\nsignal.signal(signal.SIGALRM, signal.SIG_IGN)\n"
                        "time.sleep(1.2)\nmove('R')")
        assert ("move", "R") not in box.executed
        if not r.interpreter_lost:  # the usual path: the host refused the late call
            assert_error(r, "ToolError", "time limit was reached")
            assert [c.executed for c in r.tool_calls] == [False]
        goes_on(sandbox, box)


def test_a_tool_call_outlasting_the_time_limit_stops_the_block(box: ToolBox) -> None:
    """Tool time counts toward the block's wall time, on the host's clock: a call that returns after
    the limit ends the block as a wall-time stop, even if the code ignores SIGALRM or swallows the
    stop; it gets ``kill_grace_seconds`` (generous here) to stop on its own and keeps its variables."""
    limits = SandboxLimits(**{**WALL.__dict__, "kill_grace_seconds": 10.0})
    with make(box, limits) as sandbox:
        sandbox.run("kept = 3")
        r = sandbox.run("import signal\nsignal.signal(signal.SIGALRM, signal.SIG_IGN)\nslow(1.5)\n"
                        "print('went on')\nmove('R')")
        assert r.killed_reason == "wall" and r.timed_out and not r.interpreter_lost, r.observation()
        assert_error(r, "WallTimeExceeded")
        assert "a tool call was still running when it was reached" in r.observation()
        assert "went on" not in r.stdout and [c.name for c in r.tool_calls] == ["slow"]
        r = sandbox.run("try:\n    slow(1.5)\nexcept BaseException:\n    pass\n'swallowed'")
        assert r.killed_reason == "wall" and r.timed_out and r.value_repr == "'swallowed'", r.observation()
        assert ("move", "R") not in box.executed and sandbox.run("kept").value_repr == "3"
        goes_on(sandbox, box)


def test_memory_bomb_is_a_memory_error_and_state_is_kept(sb: Sandbox, box: ToolBox) -> None:
    sb.run("kept = 41")
    r = sb.run("x = bytearray(1 << 30)")
    assert r.killed_reason == "memory" and "MemoryError" in r.error and not r.interpreter_lost
    assert "out of memory (limit 192 MiB)" in r.observation()
    assert sb.run("kept + 1").value_repr == "42"
    goes_on(sb, box)


def test_growing_memory_bomb_is_stopped(sb: Sandbox, box: ToolBox) -> None:
    r = sb.run("hog = []\nwhile True:\n    hog.append(bytearray(8 << 20))")
    assert r.killed_reason == "memory", r.observation()
    sb.run("del hog")
    goes_on(sb, box)


def test_deep_python_recursion_is_stopped(box: ToolBox) -> None:
    """A runaway recursion with the limit raised to 10**6 ends with a clear stop, and the episode goes on.

    What stops it depends on CPython. 3.10 recurses on the C stack: SIGSEGV, a ``crash``. From 3.11
    Python frames live on the heap: the recursion runs into the memory limit, the CPU limit or the
    recursion limit, and unwinding ~10**5 frames then allocates a frame object per traceback entry.
    If memory runs out there, 3.11 and 3.12 lose the exception (``SystemError: error return without
    exception set``; the sandbox reports a ``memory`` stop) and 3.13 crashes; a CPU stop whose
    unwinding outlasts the grace period is killed (``cpu``, interpreter lost). Unwinding takes about
    half of the CPU second here, so the CPU limit often passes while an exception unwinds: when that
    exception is the code's own and it unwinds cleanly (enough memory), the stop is reported with
    a ``CpuTimeExceeded`` line after its traceback (the next test forces that timing).
    """
    with make(box, CPU) as sandbox:
        r = sandbox.run("import sys\nsys.setrecursionlimit(10**6)\ndef f(n):\n    return f(n + 1)\nf(0)")
        shown, error = r.observation(), r.error or ""
        assert r.killed_reason in (None, "memory", "cpu", "crash"), shown
        if r.killed_reason is None:  # it reached the recursion limit and unwound cleanly
            assert "RecursionError: maximum recursion depth exceeded" in error and not r.interpreter_lost, shown
        else:  # a stop, said in a sentence
            assert r.stop_detail and f"[Stopped: {r.stop_detail}.]" in shown, shown
        if r.killed_reason == "memory":  # never a bare SystemError: the lost exception is explained
            assert "MemoryError" in error or "ran out of memory while unwinding" in error, shown
            assert not r.interpreter_lost, shown
        if r.killed_reason == "cpu":  # stopped inside, or killed when unwinding outlasted the grace period
            assert r.interpreter_lost or "CpuTimeExceeded" in error, shown
        if r.killed_reason == "crash":
            assert r.interpreter_lost, shown
        goes_on(sandbox, box)


def test_a_stop_that_arrives_while_an_exception_unwinds_is_shown(sb: Sandbox, box: ToolBox) -> None:
    """A stop's signal that arrives while the code's own exception unwinds (no code runs there to
    raise it in) is only noted. The block is still a stop, and its traceback must say which: a
    ``cpu`` stop that kept the interpreter shows ``CpuTimeExceeded``. Found as the chance failure of
    the deep-recursion test (a clean ``RecursionError`` with a CPU stop noted while it unwound);
    here the timing is forced by telling the worker it cannot be interrupted, then sending SIGPROF."""
    r = sb.run("import os, signal, sys\nsys.modules['__main__'].state.interruptible = False\n"
               "os.kill(os.getpid(), signal.SIGPROF)\nraise ValueError('own')")
    assert r.killed_reason == "cpu" and r.timed_out and not r.interpreter_lost, r.observation()
    assert_error(r, "ValueError: own", "CpuTimeExceeded: the code block used more than its CPU-time limit of 2 s "
                 "(reached while the exception above was raised)")
    goes_on(sb, box)


def test_c_stack_overflow_crashes_only_the_interpreter(sb: Sandbox, box: ToolBox) -> None:
    """Recursion through C (``repr``) with the limit raised. Up to 3.11 it overflows the C stack: SIGSEGV
    kills the interpreter and nothing else. From 3.12 CPython guards C recursion with a limit of its own,
    which ``sys.setrecursionlimit`` does not raise (What's New in 3.12): a RecursionError, the
    interpreter stays."""
    r = sb.run("import sys\nsys.setrecursionlimit(10**6)\nclass Deep:\n    def __repr__(self):\n"
               "        return repr(Deep())\nrepr(Deep())")
    if sys.version_info >= (3, 12):
        assert r.killed_reason is None and not r.interpreter_lost, r.observation()
        assert "RecursionError: maximum recursion depth exceeded" in (r.error or ""), r.observation()
    else:
        assert r.killed_reason == "crash" and "SIGSEGV" in r.observation() and r.interpreter_lost
    goes_on(sb, box)


def test_output_flood_is_stopped(sb: Sandbox, box: ToolBox) -> None:
    r = sb.run("while True:\n    print('spam')")
    assert r.killed_reason == "output" and len(r.stdout) == 500 and not r.interpreter_lost
    assert "printed more than 5000 characters" in r.observation()
    goes_on(sb, box)


def test_one_huge_print_is_cut(sb: Sandbox, box: ToolBox) -> None:
    r = sb.run("print('x' * 10**7)")
    assert len(r.stdout) == 500 and r.stdout_dropped_chars == 10**7 - 500
    assert r.killed_reason == "output"
    assert len(r.observation()) < 2000
    goes_on(sb, box)


def test_huge_repr_and_huge_traceback_are_cut(sb: Sandbox, box: ToolBox) -> None:
    assert len(sb.run("'y' * 10**6").value_repr) < 600
    r = sb.run("raise ValueError('z' * 10**6)")
    assert len(r.error) < 700 and "traceback truncated" in r.error
    goes_on(sb, box)


# =========================================================================== hostile: the pipe

def test_closing_the_pipe_fds_costs_only_the_interpreter(sb: Sandbox, box: ToolBox) -> None:
    r = sb.run("import os\nos.close(3)\nos.close(4)")
    assert r.killed_reason == "pipe" and r.interpreter_lost
    assert "control pipe" in r.observation()
    goes_on(sb, box)


def test_garbage_on_the_pipe_is_a_protocol_violation(sb: Sandbox, box: ToolBox) -> None:
    r = sb.run("import os\nos.write(4, b'\\xff' * 64)\nimport time\ntime.sleep(5)")
    assert r.killed_reason == "pipe" and r.interpreter_lost
    assert "invalid data" in r.observation()
    goes_on(sb, box)


def test_forged_tool_call_for_an_unknown_tool_is_refused(sb: Sandbox, box: ToolBox) -> None:
    code = ("import os, json\nbody = json.dumps({'type': 'tool', 'name': 'solve_current', 'args': [], "
            "'kwargs': {}}).encode()\nos.write(4, len(body).to_bytes(4, 'big') + body)\n"
            "size = int.from_bytes(os.read(3, 4), 'big')\njson.loads(os.read(3, size))")
    r = sb.run(code)
    assert "there is no tool named 'solve_current'" in r.value_repr
    assert r.tool_calls[0].executed is False
    goes_on(sb, box)


def test_tool_calls_from_a_finalizer_after_the_block_are_not_sent(sb: Sandbox, box: ToolBox) -> None:
    # the sandbox drops this stdout replacement after the code has finished: its __del__
    # then tries a tool call, which must never reach the host
    r = sb.run("import sys\nclass Sneaky:\n    def write(self, s):\n        return len(s)\n"
               "    def flush(self):\n        pass\n    def __del__(self):\n        move('R')\n"
               "sys.stdout = Sneaky()")
    assert r.error is None and r.tool_calls == []
    assert ("move", "R") not in box.executed
    goes_on(sb, box)


def test_closing_stdout_and_stderr(sb: Sandbox, box: ToolBox) -> None:
    r = sb.run("import sys, os\nsys.stdout.close()\nos.close(1)\nos.close(2)\nprint('gone')")
    assert_error(r, "ValueError")
    assert sb.run("print('back')").stdout == "back\n"
    goes_on(sb, box)


def test_an_exception_with_a_reason_attribute_is_the_codes_own_error(sb: Sandbox, box: ToolBox) -> None:
    """Only the sandbox's own stops name a stop reason (``urllib.error.URLError`` has a ``.reason`` too)."""
    r = sb.run("class Oops(Exception):\n    reason = 'crash'\nraise Oops('mine')")
    assert r.killed_reason is None and not r.interpreter_lost and r.stop_detail is None, r.observation()
    assert_error(r, "Oops: mine")
    goes_on(sb, box)


def test_exit_requests(sb: Sandbox, box: ToolBox) -> None:
    sb.run("kept = 2")
    assert_error(sb.run("import sys\nsys.exit(3)"), "SystemExit: 3")
    assert sb.run("kept").value_repr == "2"
    goes_on(sb, box)


# =========================================================================== hostile: forged frames

def forge(frame: str, then: str = "") -> str:
    """Code that writes one hand-made frame on the sandbox's message pipe (fd 4), then runs ``then``.
    ``frame`` is a Python expression for the frame's body: a dict (sent as JSON) or bytes (sent raw)."""
    return ("import json, os, signal\nfor s in (signal.SIGALRM, signal.SIGPROF):\n"
            "    signal.signal(s, signal.SIG_IGN)\n"
            f"body = {frame}\nbody = body if isinstance(body, bytes) else json.dumps(body).encode()\n"
            "data = len(body).to_bytes(4, 'big') + body\nwhile data:\n    data = data[os.write(4, data):]\n"
            + then)


FORGED_RESULT = "{'type': 'result', 'stdout': 'FORGED', 'dropped': 0, 'value_repr': None, 'error': None, 'stopped': None}"
FORGERIES = {  # name: (limits, code, what the observation says)
    "result, then a busy loop": (CPU, forge(FORGED_RESULT, "while True:\n    pass"), "went on running"),
    "result, then a sleep": (WALL, forge(FORGED_RESULT, "import time\ntime.sleep(60)"), "went on running"),
    "result, then the real one": (LIMITS, forge(FORGED_RESULT), "wrote more data after it"),
    "result with wrong field types": (LIMITS, forge(FORGED_RESULT.replace("'dropped': 0", "'dropped': 'many'"),
                                                    "import time\ntime.sleep(60)"), "'dropped' is a str"),
    "result with an unknown stop": (LIMITS, forge(FORGED_RESULT.replace("'stopped': None", "'stopped': 'killed'")),
                                    "stopped='killed'"),
    "result with an overlong text": (LIMITS, forge(FORGED_RESULT.replace("'FORGED'", "'FORGED' * 1000")),
                                     "longer than the output limit"),
    "an unexpected kind": (LIMITS, forge("{'type': 'ready'}"), "unexpected 'ready' message"),
    "a tool call whose args are not a list": (LIMITS, forge("{'type': 'tool', 'name': 'move', 'args': 'R', "
                                                            "'kwargs': {}}"), "'args' is a str"),
    "nesting too deep to parse": (LIMITS, forge("b'[' * 200000 + b']' * 200000"), "nested too deeply"),
    "nesting past the limit": (LIMITS, forge("{'type': 'tool', 'name': 'move', 'args': eval('[' * 40 + ']' * 40), "
                                             "'kwargs': {}}"), "nested more than 32 levels"),
    "an oversized tool call": (LIMITS, forge("{'type': 'tool', 'name': 'move', 'args': ['R ' * 1_500_000], "
                                             "'kwargs': {}}", "os.read(3, 4)"), "'tool' frame of 3000"),
    "a number too long to parse": (LIMITS, forge("b'{\"type\": \"tool\", \"name\": \"move\", \"args\": [1' "
                                                 "+ b'0' * 100000 + b'], \"kwargs\": {}}'", "os.read(3, 4)"),
                                   "not valid JSON"),
}


@pytest.mark.parametrize("name", list(FORGERIES))
def test_forged_frames_kill_the_interpreter(box: ToolBox, name: str) -> None:
    """Code that writes its own frames on the control pipe (the issue's forgeries and more): each is a
    pipe violation that kills the interpreter, said in the observation; no tool runs, the forged
    text is never shown, the code gets no CPU beyond its limit, and the next block's observation
    is its own (a fresh interpreter, not one block late)."""
    limits, code, needle = FORGERIES[name]
    with make(box, limits) as sandbox:
        sandbox.run("kept = 1")
        session = sandbox._session
        r = sandbox.run(code)
        shown = r.observation()
        assert r.killed_reason == "pipe" and r.interpreter_lost, shown
        assert needle in shown and "so the interpreter was killed" in shown and "FORGED" not in shown, shown
        assert box.executed == [] and r.tool_calls == []
        assert session.exit_info and session.exit_info["cpu"] < limits.cpu_seconds + limits.kill_grace_seconds
        r = sandbox.run("'own'")
        assert r.fresh_interpreter and r.value_repr == "'own'" and r.killed_reason is None, r.observation()
        assert_error(sandbox.run("kept"), "NameError")
        goes_on(sandbox, box)


def test_no_code_runs_between_blocks(sb: Sandbox, box: ToolBox) -> None:
    """Between blocks the interpreter is frozen (SIGSTOP, state T on the host): a POSIX timer set up by
    a block, ticking every 20 ms, gets its Python handler run only while blocks run, not 75 times in
    the 1.5 s between them."""
    code = ("import ctypes, signal\nlibc = ctypes.CDLL(None, use_errno=True)\nticks = 0\n"
            "def tick(signum, frame):\n    global ticks\n    ticks += 1\n"
            "signal.signal(signal.SIGUSR1, tick)\n"
            "class SigEvent(ctypes.Structure):\n"
            "    _fields_ = [('value', ctypes.c_void_p), ('signo', ctypes.c_int), ('notify', ctypes.c_int),\n"
            "                ('pad', ctypes.c_int * 12)]\n"
            "class Spec(ctypes.Structure):\n    _fields_ = [('interval', ctypes.c_long * 2), ('value', ctypes.c_long * 2)]\n"
            "timer = ctypes.c_void_p()\nevent = SigEvent(None, signal.SIGUSR1, 0)  # SIGEV_SIGNAL\n"
            "spec = Spec((ctypes.c_long * 2)(0, 20_000_000), (ctypes.c_long * 2)(0, 20_000_000))\n"
            "(libc.timer_create(1, ctypes.byref(event), ctypes.byref(timer)),\n"
            " libc.timer_settime(timer, 0, ctypes.byref(spec), None))")
    assert sb.run(code).value_repr == "(0, 0)"
    state = Path(f"/proc/{sb._session.child_pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    time.sleep(1.5)
    ticks = int(sb.run("ticks").value_repr)
    assert ticks < 25 and state == "T", (ticks, state)
    goes_on(sb, box)


# =========================================================================== helpers

def _tasks_of(uid: int) -> list[int]:
    """Host pids running as ``uid``."""
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                status = (entry / "status").read_text()
            except OSError:
                continue
            for line in status.splitlines():
                if line.startswith("Uid:") and int(line.split()[1]) == uid:
                    pids.append(int(entry.name))
    return pids


# =========================================================================== start deadline under load

def test_the_start_deadline_grows_with_the_load_per_cpu_up_to_its_cap() -> None:
    limits = SandboxLimits(start_seconds=20, start_max_seconds=300)
    assert limits.start_deadline_seconds(load=0.3, cpus=2) == 20  # idle: never shorter than start_seconds
    assert limits.start_deadline_seconds(load=17, cpus=2) == 170  # the loaded machine that failed at 20 s
    assert limits.start_deadline_seconds(load=400, cpus=2) == 300
    with pytest.raises(ValueError, match="start_max_seconds must be positive"):
        SandboxLimits(start_max_seconds=0)


def _slow_launcher(monkeypatch: pytest.MonkeyPatch, delay_s: float) -> None:
    """The launcher process begins ``delay_s`` late, as on a machine whose cores are taken by other work."""
    import cubebench.agents.sandbox.sandbox as sandbox_module

    real_popen = subprocess.Popen

    def late_popen(args: list[str], *a: Any, **kw: Any) -> subprocess.Popen:
        return real_popen(["/bin/sh", "-c", f'sleep {delay_s}; exec "$@"', "sh", *args], *a, **kw)

    monkeypatch.setattr(sandbox_module.subprocess, "Popen", late_popen)


def test_a_slow_start_on_a_busy_machine_is_given_the_time_it_needs(monkeypatch: pytest.MonkeyPatch,
                                                                   box: ToolBox) -> None:
    """A start slowed past ``start_seconds`` by load still starts (the deadline scales with the load) ..."""
    _slow_launcher(monkeypatch, 2.0)
    monkeypatch.setattr(os, "getloadavg", lambda: (40.0 * len(os.sched_getaffinity(0)), 0.0, 0.0))
    limits = SandboxLimits(**{**LIMITS.__dict__, "start_seconds": 1.0})
    with make(box, limits) as sandbox:
        assert sandbox.run("1+1").value_repr == "2"


def test_a_start_past_its_deadline_still_fails_on_an_idle_machine(monkeypatch: pytest.MonkeyPatch,
                                                                  box: ToolBox) -> None:
    """... and the deadline still ends a start that takes too long where the machine is idle."""
    _slow_launcher(monkeypatch, 3.0)
    monkeypatch.setattr(os, "getloadavg", lambda: (0.0, 0.0, 0.0))
    limits = SandboxLimits(**{**LIMITS.__dict__, "start_seconds": 0.5})
    with pytest.raises(SandboxError, match="could not start the sandbox"):
        make(box, limits).run("1+1")
