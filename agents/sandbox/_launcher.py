"""Launcher of the CodeAct sandbox: the process between the host and the interpreter.

Run by :class:`cubebench.agents.sandbox.Sandbox` as ``python -I -S -B _launcher.py`` with one
JSON line of configuration on stdin. It uses the standard library and ctypes only
and imports nothing from the project. It:

1. enters new mount, network, PID, IPC, UTS (and cgroup) namespaces (``unshare``); when
   not run as root, inside a new user namespace that maps only the caller's uid/gid;
2. builds a minimal root on a tmpfs (read-only Python binary, stdlib without
   site-packages, the shared libraries they need, /dev/null-like devices and an
   empty size-limited tmpfs ``/work``), ``pivot_root``s into it and detaches the
   host tree;
3. forks the sandboxed process, which becomes PID 1 of the new PID namespace, sets
   its rlimits, drops (as root) to an unprivileged uid/gid of its own without
   supplementary groups,
   sets ``PR_SET_NO_NEW_PRIVS``, installs the seccomp filter and ``exec``s a fresh
   isolated interpreter running the worker loop, with a scrubbed environment;
4. stays behind as a tiny supervisor: it reports the child's host PID and, when the
   child ends, its exit status and CPU time on stdout, and it kills the child as
   soon as its own stdin is closed (the host closed the sandbox or died).

Every layer that cannot be set up is reported as unavailable (with the reason) and
the launcher goes on with the others; the host decides whether that is acceptable.
"""
import ctypes
import json
import math
import os
import resource  # also needed by os.wait4 after the host tree is gone
import select
import signal
import sys

CLONE_NEWNS = 0x00020000
CLONE_NEWCGROUP = 0x02000000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
MS_RDONLY = 1
MS_NOSUID = 2
MS_NODEV = 4
MS_NOEXEC = 8
MS_REMOUNT = 32
MS_NOATIME = 1024
MS_NODIRATIME = 2048
MS_RELATIME = 1 << 21
MS_BIND = 4096
MS_REC = 16384
MS_PRIVATE = 1 << 18
MNT_DETACH = 2
SYS_PIVOT_ROOT = 155
PR_SET_PDEATHSIG = 1
PR_SET_NO_NEW_PRIVS = 38
PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2
MOUNTPOINT_CANDIDATES = ("/mnt", "/media", "/srv", "/opt", "/run", "/tmp")
DEVICES = ("null", "zero", "urandom", "random")

libc = ctypes.CDLL(None, use_errno=True)
libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_char_p]
libc.umount2.argtypes = [ctypes.c_char_p, ctypes.c_int]
libc.unshare.argtypes = [ctypes.c_int]
libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
libc.syscall.restype = ctypes.c_long


class SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def check(ret, what):
    """Raise OSError with errno text when a libc call failed."""
    if ret != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def _enc(s):
    return None if s is None else s.encode()


def mount(src, dst, fstype, flags, data=None):
    check(libc.mount(_enc(src), _enc(dst), _enc(fstype), flags, _enc(data)), f"mount {dst}")


def install_seccomp(program_hex):
    """Install a seccomp filter given as hex of packed struct sock_filter entries."""
    raw = bytes.fromhex(program_hex)
    buf = ctypes.create_string_buffer(raw, len(raw))
    prog = SockFprog(len(raw) // 8, ctypes.cast(buf, ctypes.c_void_p))
    check(libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.addressof(prog), 0, 0), "seccomp")


# --------------------------------------------------------------------------- namespaces

NS_LAYERS = ("mount-namespace", "pid-namespace", "network-namespace", "ipc-namespace", "uts-namespace")


def write_file(path, text):
    with open(path, "w") as f:
        f.write(text)


def enter_user_namespace(core, cfg):
    """Not root: create a user namespace too (mapping only our own uid/gid) and own the rest.

    Inside it this process holds every capability until it execs, which is all the
    mounts need; the interpreter, exec'd with a non-zero uid, keeps none.
    """
    uid, gid = os.geteuid(), os.getegid()
    if libc.unshare(CLONE_NEWUSER | core) != 0:
        return "unshare(CLONE_NEWUSER) failed (" + os.strerror(ctypes.get_errno()) + ")"
    write_file("/proc/self/setgroups", "deny")
    write_file("/proc/self/uid_map", f"{uid} {uid} 1")
    write_file("/proc/self/gid_map", f"{gid} {gid} 1")
    cfg["uid"], cfg["gid"], cfg["userns"] = uid, gid, True
    return None


def enter_namespaces(cfg, layers):
    """unshare() the namespaces; return True when mount+pid+net namespaces are active."""
    if "namespaces" in cfg["disable"]:
        for name in NS_LAYERS:
            layers[name] = "disabled by configuration"
        return False
    core = CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS
    if os.geteuid() == 0:
        failure = None if libc.unshare(core) == 0 else \
            "unshare failed (" + os.strerror(ctypes.get_errno()) + ")"
    else:
        failure = enter_user_namespace(core, cfg)
    if failure:
        for name in NS_LAYERS:
            layers[name] = f"unavailable: {failure}"
        return False
    if cfg.get("userns"):
        layers["user-namespace"] = "active: an unprivileged user namespace owns the other namespaces"
    layers["pid-namespace"] = "active: the interpreter is PID 1 of its own PID namespace; killing it kills every process it made"
    layers["network-namespace"] = "active: no network interfaces except a loopback that is down"
    layers["ipc-namespace"] = "active: private System V IPC and POSIX message queues"
    layers["uts-namespace"] = "active: private hostname"
    if libc.unshare(CLONE_NEWCGROUP) == 0:
        layers["cgroup-namespace"] = "active: the host's cgroup paths are hidden"
    return True


def pick_mountpoint(sources):
    """An existing directory to mount the new root on, not above any bind source."""
    for cand in MOUNTPOINT_CANDIDATES:
        if os.path.isdir(cand) and not any(s == cand or s.startswith(cand + "/") for s in sources):
            return cand
    raise OSError("no directory available to mount the sandbox root on")


def make_target(path, is_dir):
    os.makedirs(path if is_dir else os.path.dirname(path), exist_ok=True)
    if not is_dir and not os.path.exists(path):
        with open(path, "w"):
            pass


# statvfs flags of a bind source that a remount must keep (they are locked in a user namespace)
KEPT_FLAGS = ((os.ST_NOSUID, MS_NOSUID), (os.ST_NODEV, MS_NODEV), (os.ST_NOEXEC, MS_NOEXEC),
              (os.ST_NOATIME, MS_NOATIME), (os.ST_NODIRATIME, MS_NODIRATIME), (os.ST_RELATIME, MS_RELATIME))


def bind(src, dst, is_dir, readonly=True, dev=False):
    """Bind src onto dst, then remount it nosuid (nodev unless a device, read-only unless
    told otherwise), keeping the flags the source mount already has."""
    make_target(dst, is_dir)
    mount(src, dst, None, MS_BIND)
    kept = os.statvfs(src).f_flag
    flags = MS_REMOUNT | MS_BIND | MS_NOSUID | (0 if dev else MS_NODEV) | (MS_RDONLY if readonly else MS_NOEXEC)
    for st, ms in KEPT_FLAGS:
        if kept & st:
            flags |= ms
    mount(None, dst, None, flags)


def build_tree(root, py, cfg):
    """Populate the tmpfs at ``root`` with exactly what the interpreter needs."""
    ver = py["version_dir"]
    stdlib = f"{root}/python/lib/{ver}"
    bind(py["binary"], f"{root}/python/bin/python3", False)
    bind(py["stdlib"], stdlib, True)
    if py["dynload"] and not py["dynload"].startswith(py["stdlib"] + "/"):
        bind(py["dynload"], f"{stdlib}/lib-dynload", True)
    for sub in py["hidden"]:  # site-packages inside the stdlib dir: mask with an empty read-only tmpfs
        mount("hidden", f"{stdlib}/{sub}", "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=4k,mode=555")
    for soname, path in py["libs"].items():
        bind(path, f"{root}/python/lib/{soname}", False)
    bind(py["interp"], root + py["interp"], False)
    for dev in DEVICES:
        if os.path.exists(f"/dev/{dev}"):
            bind(f"/dev/{dev}", f"{root}/dev/{dev}", False, readonly=False, dev=True)
    os.makedirs(f"{root}/work")
    lim = cfg["limits"]
    opts = f"size={lim['disk_bytes']},nr_inodes={lim['max_files']},mode=700,uid={cfg['uid']},gid={cfg['gid']}"
    mount("work", f"{root}/work", "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, opts)


def enter_minimal_root(cfg, layers):
    """Build the minimal tree on a fresh tmpfs and pivot_root into it."""
    py = cfg["python"]
    mount(None, "/", None, MS_REC | MS_PRIVATE)  # nothing we mount may propagate to the host
    sources = [py["binary"], py["stdlib"], py["dynload"] or py["stdlib"], py["interp"], *py["libs"].values()]
    root = pick_mountpoint([os.path.realpath(s) for s in sources] + sources)
    mount("sandbox-root", root, "tmpfs", MS_NOSUID | MS_NODEV, "size=1m,nr_inodes=512,mode=755")
    build_tree(root, py, cfg)
    os.chdir(root)
    check(libc.syscall(SYS_PIVOT_ROOT, b".", b"."), "pivot_root")
    check(libc.umount2(b".", MNT_DETACH), "detach old root")
    os.chdir("/")
    mount(None, "/", None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV)
    layers["mount-namespace"] = (
        "active: pivot_root into a minimal read-only tree (Python binary, stdlib without "
        "site-packages, shared libraries, /dev/null|zero|urandom|random) plus an empty "
        f"{cfg['limits']['disk_bytes']}-byte tmpfs /work; no /proc, no host files"
    )


# --------------------------------------------------------------------------- child side

RLIMITS = (
    ("RLIMIT_AS", "memory_bytes"),
    ("RLIMIT_FSIZE", "file_size_bytes"),
    ("RLIMIT_NOFILE", "max_open_files"),
    ("RLIMIT_NPROC", "max_processes"),
)


def set_rlimits(lim, layers):
    cpu = math.ceil(lim["interpreter_cpu_seconds"])
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    for name, key in RLIMITS:
        resource.setrlimit(getattr(resource, name), (lim[key], lim[key]))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    for name in ("RLIMIT_MEMLOCK", "RLIMIT_MSGQUEUE"):
        resource.setrlimit(getattr(resource, name), (0, 0))
    layers["rlimits"] = (
        f"active: address space {lim['memory_bytes']} B, file size {lim['file_size_bytes']} B, "
        f"{lim['max_open_files']} open files, {lim['max_processes']} processes/threads for the uid, "
        f"no core dumps, {lim['interpreter_cpu_seconds']:g} CPU seconds for the interpreter's whole life"
    )


def world_executable(path):
    """True when a user with no group in common could exec ``path`` (every dir searchable)."""
    import stat
    path = os.path.realpath(path)
    parts = path.split("/")
    for i in range(2, len(parts) + 1):
        mode = os.stat("/".join(parts[:i]) or "/").st_mode
        if not mode & stat.S_IXOTH:
            return False
    return bool(os.stat(path).st_mode & stat.S_IROTH)


def drop_privileges(cfg, layers):
    if cfg.get("userns"):
        layers["unprivileged-uid"] = (
            f"active: the caller's own unprivileged uid {cfg['uid']} (a uid of its own needs root), "
            "no capabilities after exec; RLIMIT_NPROC also counts the caller's other processes")
        return
    if os.geteuid() != 0 or "uid" in cfg["disable"]:
        layers["unprivileged-uid"] = "unavailable: the host is not root" if os.geteuid() != 0 else "disabled by configuration"
        return
    if not world_executable(cfg["exec_python"]):
        layers["unprivileged-uid"] = ("unavailable: without a mount namespace the interpreter runs from "
                                      f"{cfg['exec_python']}, which other users cannot execute")
        return
    os.setgroups([])
    os.setresgid(cfg["gid"], cfg["gid"], cfg["gid"])
    os.setresuid(cfg["uid"], cfg["uid"], cfg["uid"])
    layers["unprivileged-uid"] = f"active: uid {cfg['uid']}, gid {cfg['gid']}, no supplementary groups, no capabilities"


def lock_down(cfg, layers):
    check(libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")
    layers["no-new-privs"] = "active: execve can never grant privileges (setuid bits, file capabilities)"
    check(libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0), "pdeathsig")
    if cfg["seccomp_base"] is None:
        layers["seccomp"] = cfg["seccomp_reason"]
        return
    try:
        install_seccomp(cfg["seccomp_base"])
        layers["seccomp"] = ("active: mount/unshare/setns/ptrace/setrlimit/io_uring/bpf/keyrings/"
                             "open_by_handle_at, System V IPC, memfd_create and namespace clone flags "
                             "refused; sockets only AF_UNIX")
    except OSError as exc:
        layers["seccomp"] = f"unavailable: {exc}"


def redirect_fds(cfg):
    """Keep only the two pipe ends (fds 3, 4) and the output mirror (fd 5); 0-2 become /dev/null."""
    cmd = os.dup(cfg["cmd_fd"])
    msg = os.dup(cfg["msg_fd"])
    mirror = os.dup(cfg["mirror_fd"])
    null = os.open("/dev/null", os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    os.dup2(cmd, 3)
    os.dup2(msg, 4)
    os.dup2(mirror, 5)
    os.closerange(6, 65536)
    for fd in (3, 4, 5):
        os.set_inheritable(fd, True)


def send_frame(fd, obj):
    """Write one pipe frame (4-byte length + JSON) to the host."""
    body = json.dumps(obj).encode()
    os.write(fd, len(body).to_bytes(4, "big") + body)


def child_main(cfg, layers):
    """Runs in the forked child: finish the walls, then exec the worker interpreter."""
    msg_fd = cfg["msg_fd"]
    try:
        os.setsid()
        lim = cfg["limits"]
        set_rlimits(lim, layers)
        os.chdir(cfg["workdir"])
        drop_privileges(cfg, layers)
        lock_down(cfg, layers)
        redirect_fds(cfg)
        msg_fd = 4
        layers["clean-environment"] = "active: only PATH, LANG, HOME, TMPDIR (and LD_LIBRARY_PATH inside the minimal tree) are set"
        layers["isolated-python"] = "active: python -I -S (no site, no user site, no PYTHON* variables)"
        send_frame(msg_fd, {"type": "setup", "layers": layers})
        env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": cfg["workdir"], "TMPDIR": cfg["workdir"]}
        if cfg["libdir"]:
            env["LD_LIBRARY_PATH"] = cfg["libdir"]
            env["PATH"] = "/python/bin"
        argv = [cfg["exec_python"], "-I", "-S", "-B", "-c", cfg["worker_source"]]
        os.execve(cfg["exec_python"], argv, env)
    except BaseException as exc:  # report and die: never fall through to the launcher's code
        try:
            send_frame(msg_fd, {"type": "setup_failed", "error": f"{type(exc).__name__}: {exc}"})
        finally:
            os._exit(71)


def make_fallback_workdir(cfg):
    """Without a mount namespace the work dir is a fresh host temp dir (the host removes it)."""
    import tempfile  # only here: the host tree is still reachable on this path
    path = tempfile.mkdtemp(prefix="cubebench-sandbox-")
    if os.geteuid() == 0 and "uid" not in cfg["disable"]:
        os.chown(path, cfg["uid"], cfg["gid"])
    return path


def supervise(child, cfg):
    """Report the child's pid, then wait for it; kill it when stdin reaches EOF."""
    for key in ("cmd_fd", "msg_fd", "mirror_fd"):
        os.close(cfg[key])
    started = {"event": "started", "pid": child, "workdir": cfg["workdir"]}
    sys.stdout.write(json.dumps(started) + "\n")
    sys.stdout.flush()
    pidfd = os.pidfd_open(child)
    poller = select.poll()
    poller.register(0, select.POLLIN | select.POLLHUP)
    poller.register(pidfd, select.POLLIN)
    while True:
        ready = dict(poller.poll())
        if pidfd in ready:
            break
        if 0 in ready and not os.read(0, 4096):
            os.kill(child, signal.SIGKILL)
            poller.unregister(0)
    _, status, usage = os.wait4(child, 0)
    report = {"event": "exited", "cpu": usage.ru_utime + usage.ru_stime}
    if os.WIFSIGNALED(status):
        report["signal"] = os.WTERMSIG(status)
    else:
        report["code"] = os.WEXITSTATUS(status)
    sys.stdout.write(json.dumps(report) + "\n")
    sys.stdout.flush()


def main():
    cfg = json.loads(sys.stdin.readline())
    layers = {"process": "active: a separate process, talking to the host only over two pipes"}
    isolated = False
    if enter_namespaces(cfg, layers):
        if not cfg["python"]["libs_ok"]:
            layers["mount-namespace"] = f"unavailable: {cfg['python']['problem']}"
        else:
            try:
                enter_minimal_root(cfg, layers)
                isolated = True
            except OSError as exc:
                layers["mount-namespace"] = f"unavailable: {exc}"
    if not isolated:
        cfg["workdir"] = make_fallback_workdir(cfg)
        cfg["exec_python"] = cfg["python"]["binary"]
        cfg["libdir"] = None
    else:
        cfg["workdir"] = "/work"
        cfg["exec_python"] = "/python/bin/python3"
        cfg["libdir"] = "/python/lib"
    sys.stdout.flush()
    child = os.fork()
    if child == 0:
        child_main(cfg, layers)
    supervise(child, cfg)


if __name__ == "__main__":
    main()
