"""The interpreter loop that runs inside the CodeAct sandbox.

This file is not imported by the host: its text is passed to ``python -I -S -c``
inside the sandbox, so it may use the standard library only. It talks to the host
over two inherited pipe ends (fd 3: commands in, fd 4: messages out), each message
one frame: a 4-byte big-endian length and a JSON object.

Host -> sandbox: ``init`` (tool names and docs, the exec-blocking seccomp filter,
limits), ``exec`` (a code block), ``tool_result`` (the answer to a tool call; with
``"stop": "wall"`` when the block's time ran out while the tool ran).
Sandbox -> host: ``ready``, ``tool`` (a tool call), ``result`` (the block's outcome).
The host checks every frame, kills the interpreter on any it did not expect, and
freezes (SIGSTOP) the interpreter between blocks once it is back in ``recv()``.

Blocks run in one persistent namespace, like a REPL: the value of a final
expression is reported with ``repr``. Stops that keep the interpreter alive (wall
time via ``SIGALRM``, CPU time via ``SIGPROF``, output flood, ``MemoryError``) are
raised as exceptions in the model's code; they are held back while a tool call is
on the wire, so a frame is never cut in half.
"""
import ast
import builtins
import ctypes
import io
import json
import linecache
import mmap
import os
import signal
import sys
import traceback

CMD_FD = 3
MSG_FD = 4
MIRROR_FD = 5  # shared memory where kept output is mirrored, read by the host if we die
OUTPUT_STOP_FACTOR = 10  # a block that prints ten times the shown limit is stopped
TRACEBACK_FRAMES = 30  # innermost frames kept (a deep recursion must not take ages to format)
LOST_EXCEPTION = "error return without exception set"
"""CPython's SystemError when the exception in flight vanished. CPython 3.11 and 3.12 lose it when
memory runs out while a deep stack unwinds (a frame object cannot be allocated for the traceback
and the MemoryError is cleared, CPython gh-131173): the block was stopped by the memory limit."""

_read = os.read
_write = os.write
_dumps = json.dumps
_loads = json.loads
_reserve = bytearray(1 << 20)  # freed to be able to report a MemoryError


# --------------------------------------------------------------------------- pipe format

def _read_exact(n):
    chunks = []
    while n:
        chunk = _read(CMD_FD, n)
        if not chunk:
            os._exit(0)  # the host closed the pipe: nothing left to do
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def recv():
    size = int.from_bytes(_read_exact(4), "big")
    return _loads(_read_exact(size))


def send(obj):
    body = _dumps(obj).encode()
    data = len(body).to_bytes(4, "big") + body
    while data:
        data = data[_write(MSG_FD, data):]


# --------------------------------------------------------------------------- stops

class SandboxStop(BaseException):
    """Base of the exceptions the sandbox raises to stop a code block."""
    reason = "stop"


class WallTimeExceeded(SandboxStop):
    reason = "wall"


class CpuTimeExceeded(SandboxStop):
    reason = "cpu"


class OutputLimitExceeded(SandboxStop):
    reason = "output"


class ToolError(Exception):
    """Raised inside the sandbox when a tool call fails on the host side."""


class _State:
    in_block = False  # tool calls are only sent while a block runs (not from __del__ between blocks)
    interruptible = False
    pending = None
    fired = False
    limits: dict = {}  # the host's limits (the init message's "limits")
    tool_bytes = 1 << 20  # largest tool call frame, as JSON (the host kills on a larger one)
    tool_depth = 32  # deepest nesting of a tool call frame (likewise)


state = _State()


def _stop_message(kind):
    lim = state.limits
    if kind is WallTimeExceeded:
        return f"the code block ran past its wall-time limit of {lim['wall_seconds']:g} s"
    return f"the code block used more than its CPU-time limit of {lim['cpu_seconds']:g} s"


def _on_signal(kind):
    def handler(signum, frame):
        if state.fired:
            return
        if state.interruptible:
            state.fired = True
            raise kind(_stop_message(kind))
        state.pending = kind
    return handler


def raise_pending():
    kind, state.pending = state.pending, None
    if kind is not None and not state.fired:
        state.fired = True
        raise kind(_stop_message(kind))


# --------------------------------------------------------------------------- output

class Capture(io.TextIOBase):
    """A stdout/stderr replacement that keeps the first ``limit`` characters.

    Kept text is also mirrored, as UTF-8 after an 8-byte length, into memory shared
    with the host, so what a block printed survives even if the interpreter is killed.
    """

    def __init__(self, limit, mirror):
        self.limit = limit
        self.parts = []
        self.kept = 0
        self.total = 0
        self.stopped = False
        self.mirror = mirror
        self.mirrored = 0
        if mirror is not None:
            mirror[:8] = bytes(8)

    def writable(self):
        return True

    @property
    def encoding(self):
        return "utf-8"

    def write(self, s):
        if self.closed:
            raise ValueError("I/O operation on closed file.")
        if not isinstance(s, str):
            raise TypeError(f"write() argument must be str, not {type(s).__name__}")
        self.total += len(s)
        room = self.limit - self.kept
        if room > 0:
            piece = s[:room]
            self.parts.append(piece)
            self.kept += len(piece)
            self._mirror(piece)
        if self.total > self.limit * OUTPUT_STOP_FACTOR and not self.stopped and state.interruptible:
            self.stopped = True
            raise OutputLimitExceeded(
                f"the code block printed more than {self.limit * OUTPUT_STOP_FACTOR} characters")
        return len(s)

    def _mirror(self, piece):
        if self.mirror is None:
            return
        data = piece.encode("utf-8", "surrogatepass")[:len(self.mirror) - 8 - self.mirrored]
        self.mirror[8 + self.mirrored:8 + self.mirrored + len(data)] = data
        self.mirrored += len(data)
        self.mirror[:8] = self.mirrored.to_bytes(8, "little")

    def text(self):
        return "".join(self.parts)


# --------------------------------------------------------------------------- tools

def json_depth(value, limit):
    """Nesting depth of lists/tuples and dicts in ``value`` (the host's count of the same frame)."""
    depth, level = 0, [value]
    while depth <= limit:
        containers = [v for v in level if isinstance(v, (list, tuple, dict))]
        if not containers:
            break
        depth += 1
        level = [child for v in containers for child in (v.values() if isinstance(v, dict) else v)]
    return depth


def call_tool(name, args, kwargs):
    if not state.in_block:
        raise RuntimeError(f"{name}() can only be called while a code block is running")
    frame = {"type": "tool", "name": name, "args": list(args), "kwargs": kwargs}
    try:
        request = _dumps(frame)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"arguments of {name}() must be JSON values "
                        f"(str, int, float, bool, None, list, dict): {exc}") from None
    body = request.encode()
    if len(body) > state.tool_bytes:
        raise ValueError(f"arguments of {name}() are too large ({len(body)} bytes of JSON; "
                         f"the limit is {state.tool_bytes})")
    if json_depth(frame, state.tool_depth) > state.tool_depth:
        raise ValueError(f"arguments of {name}() are nested too deeply (the limit is "
                         f"{state.tool_depth - 2} levels of lists and dicts)")
    state.interruptible = False
    try:
        data = len(body).to_bytes(4, "big") + body
        while data:
            data = data[_write(MSG_FD, data):]
        reply = recv()
    finally:
        state.interruptible = True
    if reply.get("stop") == "wall" and state.pending is None:  # the block's time ran out during the call
        state.pending = WallTimeExceeded
    raise_pending()
    if reply.get("ok"):
        return reply.get("result")
    raise ToolError(reply.get("error", "tool call failed"))


def make_stub(name, doc):
    def stub(*args, **kwargs):
        return call_tool(name, args, kwargs)
    stub.__name__ = stub.__qualname__ = name
    stub.__doc__ = doc
    stub.__module__ = "tools"
    return stub


# --------------------------------------------------------------------------- errors

def _clean(te):
    """Drop this file's frames (named ``<string>``) from a TracebackException chain."""
    seen = set()
    while te is not None and id(te) not in seen:
        seen.add(id(te))
        te.stack = traceback.StackSummary.from_list(
            [f for f in te.stack if f.filename != "<string>"])
        if te.__cause__ is not None:
            _clean(te.__cause__)
        te = te.__context__


def _tail(tb, keep):
    """The last ``keep`` entries of a traceback chain, and how many were skipped."""
    total = 0
    nodes = []
    while tb is not None:
        nodes.append(tb)
        if len(nodes) > 2 * keep:
            del nodes[:keep]
        total += 1
        tb = tb.tb_next
    nodes = nodes[-keep:]
    return (nodes[0] if nodes else None), total - len(nodes)


def format_error(exc, limit):
    tb, skipped = _tail(exc.__traceback__, TRACEBACK_FRAMES)
    te = traceback.TracebackException(type(exc), exc, tb, compact=True, limit=-TRACEBACK_FRAMES)
    _clean(te)
    text = "".join(te.format())
    if skipped:
        text = f"[{skipped} outer frames not shown]\n" + text
    if len(text) > limit:
        text = f"[traceback truncated: first {len(text) - limit} characters not shown]\n" + text[-limit:]
    return text


# --------------------------------------------------------------------------- blocks

def compile_block(code, filename):
    """Compile a block; the final expression (if any) is compiled apart to be shown."""
    tree = ast.parse(code, filename, "exec")
    expr = None
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        expr = ast.Expression(tree.body.pop().value)
        expr = compile(expr, filename, "eval")
    return compile(tree, filename, "exec"), expr


def reset_signals():
    signal.pthread_sigmask(signal.SIG_SETMASK, [])
    signal.signal(signal.SIGALRM, _on_signal(WallTimeExceeded))
    signal.signal(signal.SIGPROF, _on_signal(CpuTimeExceeded))
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)


def execute(code, number, ns, capture):
    """Run one block; return (value_repr, error, stop_reason)."""
    lim = state.limits
    filename = f"<cell-{number}>"
    linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)
    value_repr = error = reason = None
    try:
        state.interruptible = True
        raise_pending()
        body, expr = compile_block(code, filename)
        exec(body, ns)
        if expr is not None:
            value = eval(expr, ns)
            if value is not None:
                value_repr = repr(value)
                if len(value_repr) > lim["max_output_chars"]:
                    value_repr = value_repr[:lim["max_output_chars"]] + " …[repr truncated]"
    except BaseException as exc:
        state.interruptible = False
        # only the sandbox's own stops have a reason (the code's exceptions may have a .reason too)
        reason = exc.reason if isinstance(exc, SandboxStop) else "memory" if isinstance(exc, MemoryError) else None
        lost = type(exc) is SystemError and str(exc) == LOST_EXCEPTION
        if lost:
            reason = "memory"
        error = format_error(exc, lim["max_output_chars"])
        if lost:
            error += ("(the interpreter ran out of memory while unwinding the call stack, "
                      "and lost the exception that was being raised)\n")
        del exc
    finally:
        state.interruptible = False
    return value_repr, error, reason


def run_block(msg, ns, mirror):
    lim = state.limits
    capture = Capture(lim["max_output_chars"], mirror)
    saved = sys.stdout, sys.stderr
    sys.stdout = sys.stderr = capture
    state.pending, state.fired = None, False
    reset_signals()
    signal.setitimer(signal.ITIMER_REAL, lim["wall_seconds"])
    signal.setitimer(signal.ITIMER_PROF, lim["cpu_seconds"])
    state.in_block = True
    try:
        value_repr, error, reason = execute(msg["code"], msg["number"], ns, capture)
    finally:
        state.in_block = False
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.setitimer(signal.ITIMER_PROF, 0)
        state.interruptible = False
        sys.stdout, sys.stderr = saved
    if reason is None and state.pending is not None:  # the limit passed as the block was ending
        kind = state.pending
        reason = kind.reason
        if error is not None:  # the code's own exception ended it (a stop is not raised while one unwinds)
            error += f"{kind.__name__}: {_stop_message(kind)} (reached while the exception above was raised)\n"
    return {"type": "result", "stdout": capture.text(), "dropped": capture.total - capture.kept,
            "value_repr": value_repr, "error": error, "stopped": reason}


# --------------------------------------------------------------------------- start-up

class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def install_exec_filter(program_hex):
    """Stack the no-more-execve seccomp filter on this process (see _seccomp.py)."""
    if not program_hex:
        return "unavailable: no filter for this architecture or seccomp disabled"
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
    raw = bytes.fromhex(program_hex)
    buf = ctypes.create_string_buffer(raw, len(raw))
    prog = _SockFprog(len(raw) // 8, ctypes.cast(buf, ctypes.c_void_p))
    if libc.prctl(22, 2, ctypes.addressof(prog), 0, 0) != 0:  # PR_SET_SECCOMP, SECCOMP_MODE_FILTER
        return "unavailable: " + os.strerror(ctypes.get_errno())
    return "active: execve/execveat refused once the interpreter has started"


def make_namespace(tools):
    ns = {"__name__": "__main__", "__builtins__": builtins, "ToolError": ToolError}
    for name, doc in tools.items():
        ns[name] = make_stub(name, doc)
    return ns


def open_mirror():
    try:
        return mmap.mmap(MIRROR_FD, 0)
    except (OSError, ValueError):
        return None


def main():
    init = recv()
    state.limits = init["limits"]
    state.tool_bytes, state.tool_depth = init["tool_bytes"], init["tool_depth"]
    mirror = open_mirror()
    exec_layer = install_exec_filter(init.get("exec_filter"))
    ns = make_namespace(init["tools"])
    send({"type": "ready", "exec_filter": exec_layer, "uid": os.getuid(), "gid": os.getgid(),
          "pid": os.getpid(), "cwd": os.getcwd(), "path": sys.path, "env": sorted(os.environ)})
    global _reserve
    while True:
        msg = recv()
        if msg.get("type") != "exec":
            os._exit(0)
        try:
            result = run_block(msg, ns, mirror)
        except MemoryError:
            _reserve = None
            result = {"type": "result", "stdout": "", "dropped": 0, "value_repr": None,
                      "error": "MemoryError: the sandbox ran out of memory", "stopped": "memory"}
        except SandboxStop as exc:  # a late stop that escaped the block's own handler
            result = {"type": "result", "stdout": "", "dropped": 0, "value_repr": None,
                      "error": f"{type(exc).__name__}: {exc}", "stopped": exc.reason}
        send(result)
        if _reserve is None:
            try:
                _reserve = bytearray(1 << 20)
            except MemoryError:
                pass


try:
    main()
except OSError:
    os._exit(75)  # the pipes are gone or broken: the host will notice and start afresh
