"""Run ``llama_cpp.server`` with llama.cpp's extra CPU buffer types (weight repacking) turned off.

Why: with llama-cpp-python 0.3.36 built natively on these machines (AVX-512 + AMX CPUs, see
docs/llm.md), loading SmolLM2's Q4_1 weights into the repacked/AMX buffers makes every batched
decode (any prompt longer than one token) segfault the server; single-token decoding works, and so
does everything once ``llama_model_params.use_extra_bufts`` is false. llama-cpp-python exposes no
option for that field, so this entry point sets it in the default model parameters and then
hands over to the library's own server ``main``, with all of its command-line options::

    python -m cubebench.agents.llm.llama_server_main [--keep-repack] --model m.gguf --host 127.0.0.1 ...

``--keep-repack`` leaves llama.cpp's default (repacking on), for machines where it works.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from typing import Any

__all__ = ["disable_repack", "exit_with_parent", "main"]


def exit_with_parent(poll_s: float = 1.0) -> None:
    """Exit as soon as the process that started the server is gone (even if it was SIGKILLed).

    A watchdog thread polls the parent pid, which works whichever thread of the parent started us
    (unlike ``PR_SET_PDEATHSIG``, which fires when that *thread* exits).
    """
    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(poll_s)
        os._exit(0)

    threading.Thread(target=watch, name="exit-with-parent", daemon=True).start()


def disable_repack() -> None:
    """Make every model llama-cpp-python loads from now on skip the extra buffer types."""
    from llama_cpp import llama_cpp as lib

    default_params = lib.llama_model_default_params
    if getattr(default_params, "_cubebench_no_repack", False):
        return

    def no_repack_params() -> Any:
        params = default_params()
        params.use_extra_bufts = False
        return params

    no_repack_params._cubebench_no_repack = True  # type: ignore[attr-defined]
    lib.llama_model_default_params = no_repack_params


def main(argv: list[str] | None = None) -> None:
    """Strip our own flag, patch the model parameters unless asked not to, run the server."""
    args = list(sys.argv[1:] if argv is None else argv)
    keep = "--keep-repack" in args
    args = [a for a in args if a != "--keep-repack"]
    exit_with_parent()
    if not keep:
        disable_repack()
    from llama_cpp.server.__main__ import main as server_main

    sys.argv = ["llama_cpp.server", *args]
    server_main()


if __name__ == "__main__":
    main()
