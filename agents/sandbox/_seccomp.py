"""Seccomp-BPF programs for the CodeAct sandbox, assembled in pure Python.

Two filters are built here, in the parent process, and handed to the sandboxed
process as raw bytes (it installs them with ``prctl(PR_SET_SECCOMP)``):

* :func:`base_filter` is installed just before the interpreter is started. It is
  a deny-list: every syscall that could undo or get around the other layers
  (mount, pivot_root, unshare/setns, namespace-creating clone flags, ptrace,
  setrlimit, io_uring, bpf, kernel keyrings, open_by_handle_at, ...) fails with
  ``EPERM``, and sockets other than ``AF_UNIX`` cannot be created. So do System V
  IPC (shared memory, semaphores, message queues) and ``memfd_create``: their
  memory is the kernel's, not counted in the address-space limit (``RLIMIT_AS``).
* :func:`exec_filter` is stacked by the interpreter itself once it has started:
  from then on ``execve``/``execveat`` fail, so the model's code cannot replace
  the interpreter with another program.

A deny-list (rather than an allow-list) keeps CPython and its stdlib working
unchanged; the namespaces, the unprivileged uid and the rlimits stay the main
walls and seccomp shrinks the kernel surface behind them. Only x86-64 is
supported; any other architecture reports the layer as unavailable, and a
syscall made through another ABI (i386, x32) kills the process.
"""
from __future__ import annotations

import platform
import struct

__all__ = ["SUPPORTED", "base_filter", "exec_filter"]

# BPF opcodes (linux/filter.h) and seccomp return values (linux/seccomp.h).
_LD_W_ABS = 0x20
_JEQ_K = 0x15
_JGE_K = 0x35
_JSET_K = 0x45
_RET_K = 0x06
_RET_KILL_PROCESS = 0x80000000
_RET_ALLOW = 0x7FFF0000
_RET_ERRNO = 0x00050000
_EPERM = 1
_ENOSYS = 38
_AUDIT_ARCH_X86_64 = 0xC000003E
_X32_SYSCALL_BIT = 0x40000000

# struct seccomp_data offsets: int nr; u32 arch; u64 ip; u64 args[6].
_OFF_NR = 0
_OFF_ARCH = 4


def _arg_lo(i: int) -> int:
    return 16 + 8 * i


def _arg_hi(i: int) -> int:
    return 16 + 8 * i + 4


SUPPORTED: bool = platform.machine() in ("x86_64", "AMD64")

# x86-64 syscall numbers that are simply refused (EPERM).
_DENY = {
    "ptrace": 101, "syslog": 103, "personality": 135, "uselib": 134, "mknod": 133,
    "vhangup": 153, "pivot_root": 155, "_sysctl": 156, "adjtimex": 159, "setrlimit": 160,
    "chroot": 161, "acct": 163, "settimeofday": 164, "mount": 165, "umount2": 166,
    "swapon": 167, "swapoff": 168, "reboot": 169, "sethostname": 170, "setdomainname": 171,
    "iopl": 172, "ioperm": 173, "init_module": 175, "delete_module": 176, "quotactl": 179,
    "nfsservctl": 180, "lookup_dcookie": 212, "clock_settime": 227, "kexec_load": 246,
    "add_key": 248, "request_key": 249, "keyctl": 250, "mknodat": 259, "unshare": 272,
    "perf_event_open": 298, "fanotify_init": 300, "name_to_handle_at": 303,
    "open_by_handle_at": 304, "clock_adjtime": 305, "setns": 308, "process_vm_readv": 310,
    "process_vm_writev": 311, "kcmp": 312, "finit_module": 313, "kexec_file_load": 320,
    "bpf": 321, "userfaultfd": 323, "io_uring_setup": 425, "io_uring_enter": 426,
    "io_uring_register": 427, "open_tree": 428, "move_mount": 429, "fsopen": 430,
    "fsconfig": 431, "fsmount": 432, "fspick": 433, "pidfd_getfd": 438, "mount_setattr": 442,
    # memory outside RLIMIT_AS: System V IPC (a segment outlives its attachment) and memfds
    "shmget": 29, "shmat": 30, "shmctl": 31, "semget": 64, "semop": 65, "semctl": 66, "shmdt": 67,
    "msgget": 68, "msgsnd": 69, "msgrcv": 70, "msgctl": 71, "semtimedop": 220, "memfd_create": 319,
    "memfd_secret": 447,
}
_NR_CLONE = 56
_NR_CLONE3 = 435
_NR_SOCKET = 41
_NR_PRCTL = 157
_NR_PRLIMIT64 = 302
_NR_EXECVE = 59
_NR_EXECVEAT = 322

_AF_UNIX = 1
_PR_SET_PDEATHSIG = 1
# CLONE_NEWNS | NEWCGROUP | NEWUTS | NEWIPC | NEWUSER | NEWPID | NEWNET
_CLONE_NS_FLAGS = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000

Insn = tuple[int, int, int, int]


def _stmt(code: int, k: int) -> Insn:
    return (code, 0, 0, k)


def _jump(code: int, k: int, jt: int, jf: int) -> Insn:
    return (code, jt, jf, k)


def _errno(err: int) -> int:
    return _RET_ERRNO | err


def _header() -> list[Insn]:
    """Kill any other ABI; refuse x32 syscall numbers; leave the syscall number in A."""
    return [
        _stmt(_LD_W_ABS, _OFF_ARCH),
        _jump(_JEQ_K, _AUDIT_ARCH_X86_64, 1, 0),
        _stmt(_RET_K, _RET_KILL_PROCESS),
        _stmt(_LD_W_ABS, _OFF_NR),
        _jump(_JGE_K, _X32_SYSCALL_BIT, 0, 1),
        _stmt(_RET_K, _errno(_ENOSYS)),
    ]


def _deny(nr: int, err: int = _EPERM) -> list[Insn]:
    """If A == nr, fail the syscall with ``err``; otherwise fall through with A intact."""
    return [_jump(_JEQ_K, nr, 0, 1), _stmt(_RET_K, _errno(err))]


def _guarded(nr: int, body: list[Insn]) -> list[Insn]:
    """Run ``body`` (which must end in a return on every path) only when A == nr."""
    return [_jump(_JEQ_K, nr, 0, len(body))] + body


def _clone_body() -> list[Insn]:
    # clone(flags, ...): refuse any namespace-creating flag.
    return [
        _stmt(_LD_W_ABS, _arg_lo(0)),
        _jump(_JSET_K, _CLONE_NS_FLAGS, 0, 1),
        _stmt(_RET_K, _errno(_EPERM)),
        _stmt(_RET_K, _RET_ALLOW),
    ]


def _socket_body() -> list[Insn]:
    # socket(domain, ...): only AF_UNIX (socketpair-style local IPC) is allowed.
    return [
        _stmt(_LD_W_ABS, _arg_lo(0)),
        _jump(_JEQ_K, _AF_UNIX, 1, 0),
        _stmt(_RET_K, _errno(_EPERM)),
        _stmt(_RET_K, _RET_ALLOW),
    ]


def _prlimit_body() -> list[Insn]:
    # prlimit64(pid, resource, new_limit, old_limit): reading is fine, setting is not.
    return [
        _stmt(_LD_W_ABS, _arg_lo(2)),
        _jump(_JEQ_K, 0, 0, 2),
        _stmt(_LD_W_ABS, _arg_hi(2)),
        _jump(_JEQ_K, 0, 1, 0),
        _stmt(_RET_K, _errno(_EPERM)),
        _stmt(_RET_K, _RET_ALLOW),
    ]


def _prctl_body() -> list[Insn]:
    # prctl(PR_SET_PDEATHSIG, ...) is refused so the sandbox cannot outlive its launcher.
    return [
        _stmt(_LD_W_ABS, _arg_lo(0)),
        _jump(_JEQ_K, _PR_SET_PDEATHSIG, 0, 1),
        _stmt(_RET_K, _errno(_EPERM)),
        _stmt(_RET_K, _RET_ALLOW),
    ]


def _assemble(prog: list[Insn]) -> bytes:
    if len(prog) > 4096:
        raise ValueError("seccomp program too long")
    return b"".join(struct.pack("=HBBI", *insn) for insn in prog)


def base_filter() -> bytes:
    """The filter installed before the sandboxed interpreter starts (see module doc)."""
    prog = _header()
    for nr in sorted(_DENY.values()):
        prog += _deny(nr)
    prog += _deny(_NR_CLONE3, _ENOSYS)  # its flags live in memory BPF cannot read; libc falls back to clone
    prog += _guarded(_NR_CLONE, _clone_body())
    prog += _guarded(_NR_SOCKET, _socket_body())
    prog += _guarded(_NR_PRLIMIT64, _prlimit_body())
    prog += _guarded(_NR_PRCTL, _prctl_body())
    prog.append(_stmt(_RET_K, _RET_ALLOW))
    return _assemble(prog)


def exec_filter() -> bytes:
    """The filter the interpreter stacks on itself once started: no more execve."""
    prog = _header() + _deny(_NR_EXECVE) + _deny(_NR_EXECVEAT)
    prog.append(_stmt(_RET_K, _RET_ALLOW))
    return _assemble(prog)
