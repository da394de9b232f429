"""``cubebench.training.react_grpo`` (entry point ``benchmarks/train_grpo.py``): group-relative advantages, one GRPO step that moves the adapter by the rewards,
resuming from its saved state, and the adapter playing through the runner.

Slow (about a minute on two cores): a tiny random-weight chat model built here (no download) plays groups of
depth-3 training episodes under the sticker reward, so the group's rewards differ.
"""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import needs

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "train_grpo.py"


def _module():  # type: ignore[no-untyped-def]
    return importlib.import_module("cubebench.training.react_grpo")


def test_advantages_are_relative_to_the_group_and_equal_rewards_teach_nothing() -> None:
    grpo = _module()
    advantages = grpo.group_advantages([1.0, 0.0, 0.0, 1.0])
    assert advantages == pytest.approx([1.0, -1.0, -1.0, 1.0], abs=1e-3)
    assert grpo.group_advantages([0.3, 0.3, 0.3]) == [0.0, 0.0, 0.0]


def test_bad_arguments_are_refused_by_name() -> None:
    for bad in (["--group", "1"], ["--steps", "0"]):
        out = subprocess.run([sys.executable, str(SCRIPT), "--out", "x", *bad], capture_output=True, text=True,
                             timeout=120, check=False)
        assert out.returncode == 2 and bad[0] in out.stderr.strip().splitlines()[-1]


def run(out: Path, base: Path, steps: int) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(SCRIPT), "--out", str(out), "--base", str(base), "--depths", "4",
                           "--per-depth", "2", "--steps", str(steps), "--group", "3", "--reply-tokens", "24",
                           "--lr", "1e-2", "--save-steps", "1", "--shaping-weight", "1.0", "--threads", "1"],
                          capture_output=True, text=True, timeout=900, check=False)


@pytest.mark.slow
@needs("peft", "transformers", "torch")
def test_a_grpo_step_moves_the_adapter_resumes_and_the_adapter_plays(tmp_path: Path) -> None:
    from safetensors.torch import load_file

    from cubebench.agents.llm.tiny_model import build_tiny_chat_model
    from cubebench.runner.cli import main
    from cubebench.runner.store import open_run

    base = build_tiny_chat_model(tmp_path / "base", context=8192)
    out = tmp_path / "grpo"
    first = run(out, base, 1)
    assert first.returncode == 0, first.stderr[-3000:]
    history = json.loads((out / "training.json").read_text())["history"]
    assert [h["step"] for h in history] == [1] and history[0]["depth"] == 4
    weights = load_file(out / "adapter_model.safetensors")
    again = run(out, base, 2)  # resumes at step 1: one more step
    assert again.returncode == 0, again.stderr[-3000:]
    history = json.loads((out / "training.json").read_text())["history"]
    assert [h["step"] for h in history] == [1, 2]
    moved = load_file(out / "adapter_model.safetensors")
    stepped = [h for h in history if not h["skipped"]]
    if stepped[-1:] and stepped[-1]["step"] == 2:  # the second group's rewards differed: the adapter moved
        assert any((moved[k] - weights[k]).abs().max() > 0 for k in weights)
    else:
        assert all((moved[k] - weights[k]).abs().max() == 0 for k in weights)
    run_db = tmp_path / "play.sqlite"
    assert main(["run", "--suite", "exp1", "--tiers", "symbolic", "--depths", "1", "--limit", "1", "--agent",
                 f"hf:{out}", "--episode-max-tokens", "3000", "--out", str(run_db), "--no-progress", "--quiet"]) == 1
    # 1: the budget ends the tiny model's episode as an error, so the run evaluated nothing and says so
    with open_run(run_db) as store:
        assert next(store.records())[1].steps[0].model_log[0]["provider"] == "hf"


@pytest.mark.slow
@needs("peft", "transformers", "torch")
def test_an_update_raises_the_likelihood_of_the_better_reply_over_the_worse(tmp_path: Path) -> None:
    """The step itself, on a group whose rewards differ: after it, the reply with the positive advantage is more
    likely than before, and more likely relative to the one with the negative advantage (their shared tokens,
    ``Action: ``, pull both ways, so the worse reply's own likelihood may move either way)."""
    import torch

    from cubebench.agents.llm.tiny_model import build_tiny_chat_model

    grpo = _module()
    base = build_tiny_chat_model(tmp_path / "base", context=4096)
    args = grpo.parse_args(["--out", str(tmp_path / "out"), "--base", str(base), "--lr", "5e-2", "--lora-r", "4"])
    torch.manual_seed(0)
    policy = grpo.load_policy(args)
    optimizer = torch.optim.AdamW([p for p in policy.model.parameters() if p.requires_grad], lr=args.lr)
    prompt = [{"role": "system", "content": "Solve the cube."}, {"role": "user", "content": "WWWWWWWWW GGG"}]
    good, bad = "Action: move[R]", "Action: solve[]"
    group = [grpo.Rollout(1.0, True, [(prompt, good)]), grpo.Rollout(0.0, False, [(prompt, bad)])]

    def likelihood(reply: str) -> float:
        with torch.no_grad():
            return float(grpo.completion_logprob(policy, prompt, reply)[0])

    before = likelihood(good), likelihood(bad)
    advantages = grpo.group_advantages([r.reward for r in group])
    loss, tokens = grpo.update(policy, optimizer, group, advantages, max_grad_norm=1.0)
    after = likelihood(good), likelihood(bad)
    assert tokens > 0 and loss != 0.0
    assert after[0] > before[0] and after[0] - after[1] > before[0] - before[1] + 0.1
