"""A Hugging Face causal LM run in-process through transformers: ``make_client("hf:PATH")``.

``PATH`` is a model folder (``config.json`` and tokenizer files, as ``save_pretrained`` writes them), a
``.gguf`` file (dequantized by transformers; needs the ``gguf`` package), or a LoRA adapter folder
(``adapter_config.json``) whose base is one of those; ``hf:BASE::ADAPTER`` names the base and the
adapter apart.  Nothing is downloaded: every file is read from disk.

The model speaks through its own chat template and decodes greedily unless a temperature above 0 is
asked for; replies stop at the agent's stop strings or at the token limit; token counts are the
tokenizer's.  It reads text only: an image in a message is a configuration error (play the text form of
a tier).  A GPU is used when torch sees one, else the CPU.  Weights are loaded once per process and
shared by every client of the same model, so each episode gets its own client (its own budget and seed)
without loading anything again; the calls of concurrent episodes share forward passes (:mod:`.hf_batch`).
Every file a spec names is checked before torch is imported (:mod:`.hf_files`), so a typo or a damaged
file is one line at once.  Loading takes tens of seconds on a small CPU (about 85 s for ``--agent sft`` on a
loaded 2-core machine), so before a process loads a model it prints one line to stderr saying what it loads,
how big, from where and how (:func:`loading_line`); later clients of that model print nothing.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Sequence

from .client import ModelClient, CallResult
from .hf_batch import BatchedGenerator, GenerationRequest, eos_ids, native_bf16
from .hf_files import (ADAPTER_SEPARATOR, HF_HINT, HFModelUnavailable, ModelPaths, model_paths, one_line)
from .messages import Message
from .reply import ModelError

__all__ = ["HFModelClient", "HFModelUnavailable", "HF_HINT", "HFModel", "load_hf_model", "loading_line",
           "parse_hf_spec", "read_pretrained"]


@dataclass
class HFModel:
    """A loaded model and its tokenizer (shared by the clients of one process), with the batched generator
    its clients call through (:mod:`.hf_batch`)."""

    model: Any
    tokenizer: Any
    device: str
    name: str
    lock: threading.Lock = field(default_factory=threading.Lock)
    generator: BatchedGenerator = field(init=False)

    def __post_init__(self) -> None:
        self.generator = BatchedGenerator(self.model, self.tokenizer, self.device, self.lock,
                                          precision=inference_precision(self.device))


PRECISION_ENV = "CUBEBENCH_HF_PRECISION"
"""``fp32``, ``bf16`` or ``auto`` (the default): the precision of an in-process model's matrix products."""


def inference_precision(device: str) -> str:
    """``bf16`` (autocast over the float32 weights) on a CPU that multiplies bfloat16 natively, else ``fp32``;
    ``$CUBEBENCH_HF_PRECISION`` pins either (replies can differ in the last digits, so a comparison across
    machines may want ``fp32`` everywhere)."""
    asked = os.environ.get(PRECISION_ENV, "auto").strip().lower() or "auto"
    if asked not in ("auto", "fp32", "bf16"):
        raise HFModelUnavailable(f"hf: ${PRECISION_ENV} is auto, fp32 or bf16, not {asked!r}")
    if asked != "auto":
        return asked
    return "bf16" if device == "cpu" and native_bf16() else "fp32"


def parse_hf_spec(rest: str) -> tuple[str, str | None]:
    """``(model path, adapter path or None)`` of what follows ``hf:`` in an agent spec."""
    base, sep, adapter = rest.partition(ADAPTER_SEPARATOR)
    if not base or (sep and not adapter):
        raise ValueError(f"bad spec 'hf:{rest}': expected hf:<model folder or .gguf file>[{ADAPTER_SEPARATOR}<adapter "
                         "folder>]")
    return base, adapter or None


_LOADED: dict[tuple[Path, Path | None, str | None], HFModel] = {}
_BY_SPEC: dict[tuple[str, str | None, str | None, str], HFModel] = {}
"""The loaded model of each spec as given (with the working directory a relative path is read from), so the
file checks run once per spec and process, not once per episode: parsing a GGUF's header takes seconds."""
_LOADING = threading.Lock()


def load_hf_model(path: str, adapter: str | None = None, device: str | None = None, *,
                  announce: bool = True) -> HFModel:
    """The model at ``path`` (with ``adapter`` applied), loaded once per process.  Every file is checked before
    torch is imported (:mod:`.hf_files`); :class:`HFModelUnavailable` names what is wrong in one line (a missing
    path, a damaged file, an adapter that does not fit its base).  A load prints :func:`loading_line` to stderr
    first, unless ``announce`` is false (a caller that says it itself)."""
    spec = (path, adapter, device, os.getcwd())
    with _LOADING:
        if spec not in _BY_SPEC:
            paths = model_paths(path, adapter)
            key = (paths.base, paths.adapter, device)
            if key not in _LOADED:
                if announce:
                    print(loading_line(paths), file=sys.stderr, flush=True)
                _LOADED[key] = _load(paths, device)
            _BY_SPEC[spec] = _LOADED[key]
        return _BY_SPEC[spec]


def loading_line(paths: ModelPaths) -> str:
    """What a process is about to load, as one line: the model's file or folder, its size, where it is, the
    adapter, and how it runs (``hf model: loading model.gguf (98 MB) from /models, with the LoRA adapter
    /adapters/policy, in-process through transformers``)."""
    base = paths.base
    files = [base] if base.is_file() else [f for f in base.iterdir() if f.suffix in (".safetensors", ".bin", ".gguf")]
    size = sum(f.stat().st_size for f in files if f.is_file()) / 1e6
    adapter = f", with the LoRA adapter {paths.adapter}" if paths.adapter is not None else ""
    return (f"hf model: loading {base.name} ({size:,.0f} MB) from {base.parent}{adapter}, in-process through "
            "transformers (tens of seconds on a CPU)")


def _libraries() -> tuple[Any, Any]:
    try:
        import torch
        import transformers
    except ImportError as err:
        raise HFModelUnavailable(f"hf: models need {err.name or 'transformers'}: {HF_HINT}") from None
    return torch, transformers


def _load(paths: ModelPaths, device: str | None) -> HFModel:
    torch, _ = _libraries()
    tokenizer, model = read_pretrained(paths.base)
    if getattr(tokenizer, "chat_template", None) is None:
        raise HFModelUnavailable(f"hf: the model at {paths.base} has no chat template: its tokenizer files must "
                                 "carry one")
    if paths.adapter is not None:
        model = _with_adapter(model, paths.adapter, paths.base)
    device = device or ("cuda" if torch.cuda.is_available() else "cpu")
    model.to(device).eval()
    return HFModel(model=model, tokenizer=tokenizer, device=device, name=str(paths.base))


def read_pretrained(path: Path) -> tuple[Any, Any]:
    """The tokenizer and float32 causal LM at ``path`` (a model folder or a GGUF file, checked by
    :func:`~.hf_files.model_paths`), read from disk only.  :class:`HFModelUnavailable` names what transformers
    cannot read.  The client and the training programs read models through it."""
    torch, transformers = _libraries()
    transformers.utils.logging.disable_progress_bar()  # the runner and the training programs draw their own
    folder, options = (path.parent, {"gguf_file": path.name}) if path.is_file() else (path, {})
    try:
        tokenizer = transformers.AutoTokenizer.from_pretrained(folder, local_files_only=True, **options)
        model = transformers.AutoModelForCausalLM.from_pretrained(folder, local_files_only=True, dtype=torch.float32,
                                                                  **options)
    except Exception as err:  # noqa: BLE001 - a loader's failure on a user's files is one line, whatever its type
        raise HFModelUnavailable(f"hf: transformers cannot read the model at {path}: {one_line(err)} "
                                 f"(the hf extra: {HF_HINT})") from None
    return tokenizer, model


def _with_adapter(model: Any, adapter: Path, base: Path) -> Any:
    try:
        from peft import PeftModel
    except ImportError:
        raise HFModelUnavailable(f"hf: a LoRA adapter needs peft: {HF_HINT}") from None
    try:
        return PeftModel.from_pretrained(model, str(adapter), is_trainable=False).merge_and_unload()
    except Exception as err:  # noqa: BLE001 - a loader's failure on a user's files is one line, whatever its type
        raise HFModelUnavailable(f"hf: the adapter at {adapter} does not fit the base {base}: {one_line(err)}") from None


class HFModelClient(ModelClient):
    """A local Hugging Face model behind the same interface, budgets and logs as the HTTP clients."""

    provider = "hf"
    announces_loading: ClassVar[bool] = True
    """Whether loading prints :func:`loading_line` (a subclass that says what it loads itself turns it off)."""

    def __init__(self, path: str, *, adapter: str | None = None, device: str | None = None,
                 loaded: HFModel | None = None, **settings: Any) -> None:
        """Load the model at ``path`` (with ``adapter``), or serve ``loaded``, a model already in memory (a policy
        being trained: ``cubebench.training.react_grpo``), under the name ``path``."""
        settings.setdefault("price", (0.0, 0.0))
        super().__init__(path if adapter is None else f"{path}{ADAPTER_SEPARATOR}{adapter}", **settings)
        self.loaded = loaded if loaded is not None else load_hf_model(path, adapter, device,
                                                                      announce=self.announces_loading)
        self.loaded.generator.open_session()
        self._session = True

    def build_request(self, messages: Sequence[Message], *, stop: list[str] | None, max_tokens: int,
                       temperature: float | None, seed: int | None, extra: dict[str, Any]) -> dict[str, Any]:
        if extra:
            raise ModelError(f"{self.provider}: request options {sorted(extra)} are for HTTP servers (a grammar is llama.cpp's); "
                             "an in-process model takes none", kind="config")
        return {"messages": [{"role": m["role"], "content": _text_only(m["content"], self.provider)} for m in messages],
                "stop": stop or [], "max_new_tokens": max_tokens, "temperature": temperature, "seed": seed}

    def loggable(self, request: dict[str, Any]) -> dict[str, Any]:
        return {"model": self.model, **request}

    def endpoint(self) -> str:
        return f"{self.provider}:{self.model} ({self.loaded.device})"

    def attempt(self, request: dict[str, Any]) -> CallResult:
        tokenizer, model = self.loaded.tokenizer, self.loaded.model
        ids = tokenizer.apply_chat_template(request["messages"], add_generation_prompt=True, return_dict=True)["input_ids"]
        n_in = len(ids)
        limit = getattr(model.config, "max_position_embeddings", None)
        if limit is not None and n_in >= limit:
            raise ModelError(f"{self.provider}: the prompt ({n_in} tokens) fills the model's context of {limit} tokens",
                             kind="client_error")
        if limit is not None and n_in + request["max_new_tokens"] > limit:  # as llama.cpp does: the room left
            request = {**request, "max_new_tokens": limit - n_in}
        started = time.monotonic()
        try:
            new = self.loaded.generator.generate(GenerationRequest(
                ids=tuple(int(i) for i in ids), max_new_tokens=request["max_new_tokens"],
                temperature=request["temperature"], stop=tuple(request["stop"]), seed=request["seed"]))
        except (RuntimeError, ValueError) as err:
            raise ModelError(f"{self.provider}: generation failed: {one_line(err)}", kind="error") from None
        text, finish = self._decoded(new, request)
        body = {"text": text, "finish_reason": finish, "generate_s": round(time.monotonic() - started, 3),
                "precision": self.loaded.generator.precision}
        return CallResult(text=text, finish_reason=finish, input_tokens=n_in, output_tokens=len(new), status=200,
                       body=body)

    def _decoded(self, new: list[int], request: dict[str, Any]) -> tuple[str, str]:
        """The reply's text, cut before the first stop string, and why it ended (``stop`` or ``length``)."""
        text = self.loaded.tokenizer.decode(new, skip_special_tokens=True)
        cuts = [text.find(s) for s in request["stop"] if s and s in text]
        if cuts:
            return text[:min(cuts)], "stop"
        ended = bool(new) and new[-1] in eos_ids(self.loaded.tokenizer, self.loaded.model)
        return text, "stop" if ended or len(new) < request["max_new_tokens"] else "length"

    def close(self) -> None:
        """The episode is over: the batched generator stops waiting for this client."""
        if self._session:
            self._session = False
            self.loaded.generator.close_session()


def _text_only(content: Any, provider: str) -> str:
    if isinstance(content, str):
        return content
    if any(part.get("type") != "text" for part in content):
        raise ModelError(f"{provider}: this client reads text only; the message holds an image (play the tier's text "
                         "form: --obs-format text, or --no-images for question suites)", kind="config")
    return "".join(part["text"] for part in content)
