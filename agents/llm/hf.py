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
without loading anything again.
"""

from __future__ import annotations

import importlib.util
import json
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from .client import ModelClient, _Result
from .local import find_smollm2_gguf
from .messages import Message
from .reply import ModelError

__all__ = ["HFModelClient", "HFModelUnavailable", "HF_HINT", "load_hf_model", "lora_config", "model_files", "parse_hf_spec",
           "read_pretrained", "trainable", "training_base"]

HF_HINT = 'pip install -e ".[hf]" in the CubeBench checkout'  # cubebench.extras.install_hint("hf")
ADAPTER_SEPARATOR = "::"


class HFModelUnavailable(ModelError):
    """The model cannot be loaded: a package is missing, or a file is not what transformers reads."""

    def __init__(self, message: str) -> None:
        super().__init__(message, kind="config")


@dataclass(frozen=True)
class HFModel:
    """A loaded model and its tokenizer (shared by the clients of one process)."""

    model: Any
    tokenizer: Any
    device: str
    name: str
    lock: threading.Lock


def parse_hf_spec(rest: str) -> tuple[str, str | None]:
    """``(model path, adapter path or None)`` of what follows ``hf:`` in an agent spec."""
    base, sep, adapter = rest.partition(ADAPTER_SEPARATOR)
    if not base or (sep and not adapter):
        raise ValueError(f"bad spec 'hf:{rest}': expected hf:<model folder or .gguf file>[{ADAPTER_SEPARATOR}<adapter "
                         "folder>]")
    return base, adapter or None


_LOADED: dict[tuple[str, str | None, str | None], HFModel] = {}
_LOADING = threading.Lock()


def load_hf_model(path: str, adapter: str | None = None, device: str | None = None) -> HFModel:
    """The model at ``path`` (with ``adapter`` applied), loaded once per process; :class:`HFModelUnavailable`
    names what is wrong (a missing path, a file transformers cannot read, an adapter that does not fit)."""
    key = (str(Path(path).expanduser().resolve()), str(Path(adapter).expanduser().resolve()) if adapter else None,
           device)
    with _LOADING:
        if key not in _LOADED:
            _LOADED[key] = _load(Path(path).expanduser(), Path(adapter).expanduser() if adapter else None, device)
        return _LOADED[key]


def _libraries() -> tuple[Any, Any]:
    try:
        import torch
        import transformers
    except ImportError as err:
        raise HFModelUnavailable(f"hf: models need {err.name or 'transformers'}: {HF_HINT}") from None
    return torch, transformers


def _load(path: Path, adapter: Path | None, device: str | None) -> HFModel:
    torch, transformers = _libraries()
    transformers.utils.logging.disable_progress_bar()  # the runner draws its own progress
    if adapter is None and (path / "adapter_config.json").is_file():
        path, adapter = _adapter_base(path), path
    tokenizer, model = read_pretrained(path)
    if getattr(tokenizer, "chat_template", None) is None:
        raise HFModelUnavailable(f"hf: the model at {path} has no chat template: its tokenizer files must carry one")
    if adapter is not None:
        model = _with_adapter(model, adapter, path)
    device = device or ("cuda" if torch.cuda.is_available() else "cpu")
    model.to(device).eval()
    return HFModel(model=model, tokenizer=tokenizer, device=device, name=str(path), lock=threading.Lock())


def model_files(path: Path) -> tuple[Path, dict[str, Any]]:
    """The folder transformers reads and its options (``gguf_file`` for a GGUF)."""
    if not path.exists():
        raise HFModelUnavailable(f"hf: no model at {path}: give a model folder (config.json), a .gguf file or a LoRA "
                                 "adapter folder")
    if path.is_file():
        if path.suffix != ".gguf":
            raise HFModelUnavailable(f"hf: {path} is a file but not a .gguf: give a model folder or a .gguf file")
        if importlib.util.find_spec("gguf") is None:
            raise HFModelUnavailable(f"hf: reading {path.name} needs the gguf package: {HF_HINT}")
        return path.parent, {"gguf_file": path.name}
    if not (path / "config.json").is_file():
        raise HFModelUnavailable(f"hf: {path} has no config.json: give a model folder as save_pretrained writes it, "
                                 "a .gguf file or a LoRA adapter folder")
    return path, {}


def read_pretrained(path: Path, *, train: bool = False) -> tuple[Any, Any]:
    """The tokenizer and float32 causal LM at ``path`` (a model folder or a GGUF file), read from disk only; with
    ``train``, ready to train (:func:`trainable`).  :class:`HFModelUnavailable` names what transformers cannot read.
    The client and the training scripts read models through it."""
    torch, transformers = _libraries()
    folder, options = model_files(path)
    try:
        tokenizer = transformers.AutoTokenizer.from_pretrained(folder, local_files_only=True, **options)
        model = transformers.AutoModelForCausalLM.from_pretrained(folder, local_files_only=True, dtype=torch.float32,
                                                                  **options)
    except (OSError, ValueError, KeyError, TypeError, RuntimeError) as err:
        raise HFModelUnavailable(f"hf: transformers cannot read the model at {path}: {_first_line(err)} "
                                 f"(the hf extra: {HF_HINT})") from None
    return tokenizer, trainable(model) if train else model


def training_base(base: str | None) -> Path:
    """The model a training script fine-tunes: ``base``, else the embedded SmolLM2-135M-Instruct GGUF."""
    if base is not None:
        return Path(base).expanduser().resolve()
    return find_smollm2_gguf().resolve()


def lora_config(r: int) -> Any:
    """The LoRA adapter the training scripts train: rank ``r``, alpha ``2r``, no dropout, on the attention
    projections."""
    try:
        from peft import LoraConfig
    except ImportError:
        raise HFModelUnavailable(f"hf: a LoRA adapter needs peft: {HF_HINT}") from None
    return LoraConfig(r=r, lora_alpha=2 * r, lora_dropout=0.0, task_type="CAUSAL_LM",
                      target_modules=["q_proj", "k_proj", "v_proj", "o_proj"])


def trainable(model: Any) -> Any:
    """``model`` ready to train: transformers dequantizes a GGUF file's weights to float32 as it loads them, but
    the model still says it is quantized, and its Trainer refuses it; those marks are dropped (the weights are
    plain float tensors).  Any other model is returned as it is."""
    quantizer = getattr(model, "hf_quantizer", None)
    method = getattr(getattr(quantizer, "quantization_config", None), "quant_method", None)
    if quantizer is not None and str(getattr(method, "value", method)) == "gguf":
        model.hf_quantizer = None
        model.is_quantized = False
        if getattr(model.config, "quantization_config", None) is not None:
            del model.config.quantization_config
    return model


def _adapter_base(adapter: Path) -> Path:
    """The base model an adapter folder names (``base_model_name_or_path``), which must be on disk."""
    try:
        base = json.loads((adapter / "adapter_config.json").read_text(encoding="utf-8"))["base_model_name_or_path"]
    except (OSError, ValueError, KeyError, TypeError) as err:
        raise HFModelUnavailable(f"hf: the adapter at {adapter} has no readable base_model_name_or_path "
                                 f"({_first_line(err)}): name the base as hf:BASE{ADAPTER_SEPARATOR}{adapter}") from None
    base_path = Path(str(base)).expanduser()
    if not base_path.is_absolute():
        base_path = (adapter / base_path).resolve()
    if not base_path.exists():
        raise HFModelUnavailable(f"hf: the adapter at {adapter} names its base {base!r}, which is not on this disk: "
                                 f"name the base as hf:BASE{ADAPTER_SEPARATOR}{adapter}")
    return base_path


def _with_adapter(model: Any, adapter: Path, base: Path) -> Any:
    try:
        from peft import PeftModel
    except ImportError:
        raise HFModelUnavailable(f"hf: a LoRA adapter needs peft: {HF_HINT}") from None
    if not (adapter / "adapter_config.json").is_file():
        raise HFModelUnavailable(f"hf: {adapter} is not a LoRA adapter folder (no adapter_config.json)")
    try:
        return PeftModel.from_pretrained(model, str(adapter), is_trainable=False).merge_and_unload()
    except (OSError, ValueError, KeyError, TypeError, RuntimeError) as err:
        raise HFModelUnavailable(f"hf: the adapter at {adapter} does not fit the base {base}: "
                                 f"{_first_line(err)}") from None


def _first_line(err: BaseException) -> str:
    text = str(err).strip().splitlines()
    return (text[0] if text else type(err).__name__)[:300]


class HFModelClient(ModelClient):
    """A local Hugging Face model behind the same interface, budgets and logs as the HTTP clients."""

    provider = "hf"

    def __init__(self, path: str, *, adapter: str | None = None, device: str | None = None,
                 loaded: HFModel | None = None, **settings: Any) -> None:
        """Load the model at ``path`` (with ``adapter``), or serve ``loaded``, a model already in memory (a policy
        being trained: ``benchmarks/train_grpo.py``), under the name ``path``."""
        settings.setdefault("price", (0.0, 0.0))
        super().__init__(path if adapter is None else f"{path}{ADAPTER_SEPARATOR}{adapter}", **settings)
        self.loaded = loaded if loaded is not None else load_hf_model(path, adapter, device)

    def _build_request(self, messages: Sequence[Message], *, stop: list[str] | None, max_tokens: int,
                       temperature: float | None, seed: int | None, extra: dict[str, Any]) -> dict[str, Any]:
        if extra:
            raise ModelError(f"hf: request options {sorted(extra)} are for HTTP servers (a grammar is llama.cpp's); "
                             "an in-process model takes none", kind="config")
        return {"messages": [{"role": m["role"], "content": _text_only(m["content"])} for m in messages],
                "stop": stop or [], "max_new_tokens": max_tokens, "temperature": temperature, "seed": seed}

    def _loggable(self, request: dict[str, Any]) -> dict[str, Any]:
        return {"model": self.model, **request}

    def _endpoint(self) -> str:
        return f"hf:{self.model} ({self.loaded.device})"

    def _attempt(self, request: dict[str, Any]) -> _Result:
        torch, _ = _libraries()
        tokenizer, model = self.loaded.tokenizer, self.loaded.model
        encoded = tokenizer.apply_chat_template(request["messages"], add_generation_prompt=True, return_tensors="pt",
                                                return_dict=True)
        n_in = int(encoded["input_ids"].shape[1])
        limit = getattr(model.config, "max_position_embeddings", None)
        if limit is not None and n_in >= limit:
            raise ModelError(f"hf: the prompt ({n_in} tokens) fills the model's context of {limit} tokens",
                             kind="client_error")
        if limit is not None and n_in + request["max_new_tokens"] > limit:  # as llama.cpp does: the room left
            request = {**request, "max_new_tokens": limit - n_in}
        options = self._generation_options(request)
        started = time.monotonic()
        try:
            with self.loaded.lock, torch.inference_mode():
                if options.get("do_sample") and request["seed"] is not None:
                    torch.manual_seed(int(request["seed"]))
                out = model.generate(**{k: v.to(self.loaded.device) for k, v in encoded.items()}, **options)
        except (RuntimeError, ValueError) as err:
            raise ModelError(f"hf: generation failed: {_first_line(err)}", kind="error") from None
        new = out[0, n_in:].tolist()
        text, finish = self._decoded(new, request)
        body = {"text": text, "finish_reason": finish, "generate_s": round(time.monotonic() - started, 3)}
        return _Result(text=text, finish_reason=finish, input_tokens=n_in, output_tokens=len(new), status=200,
                       body=body)

    def _generation_options(self, request: dict[str, Any]) -> dict[str, Any]:
        tokenizer = self.loaded.tokenizer
        temperature = request["temperature"]
        pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
        options: dict[str, Any] = {"max_new_tokens": request["max_new_tokens"], "pad_token_id": pad,
                                   "do_sample": bool(temperature and temperature > 0)}
        if options["do_sample"]:
            options["temperature"] = float(temperature)
        else:  # greedy: drop sampling defaults a model's generation_config may carry (they would only warn)
            options.update(temperature=None, top_p=None, top_k=None)
        if request["stop"]:
            options.update(stop_strings=list(request["stop"]), tokenizer=tokenizer)
        return options

    def _decoded(self, new: list[int], request: dict[str, Any]) -> tuple[str, str]:
        """The reply's text, cut before the first stop string, and why it ended (``stop`` or ``length``)."""
        tokenizer = self.loaded.tokenizer
        text = tokenizer.decode(new, skip_special_tokens=True)
        cuts = [text.find(s) for s in request["stop"] if s and s in text]
        if cuts:
            return text[:min(cuts)], "stop"
        ended = bool(new) and new[-1] in _eos_ids(tokenizer, self.loaded.model)
        return text, "stop" if ended or len(new) < request["max_new_tokens"] else "length"


def _eos_ids(tokenizer: Any, model: Any) -> set[int]:
    ids = {tokenizer.eos_token_id}
    configured = getattr(getattr(model, "generation_config", None), "eos_token_id", None)
    ids.update(configured if isinstance(configured, list) else [configured])
    return {i for i in ids if i is not None}


def _text_only(content: Any) -> str:
    if isinstance(content, str):
        return content
    if any(part.get("type") != "text" for part in content):
        raise ModelError("hf: this client reads text only; the message holds an image (play the tier's text form: "
                         "--obs-format text, or --no-images for question suites)", kind="config")
    return "".join(part["text"] for part in content)
