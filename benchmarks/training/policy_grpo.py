"""GRPO on top of the policy's SFT adapter: groups of sampled episodes, each scored by the shared episode reward.

    python -m cubebench.training.policy_grpo --adapter runs/policy-sft --out runs/policy-grpo
    cubebench run --suite exp1 --tiers symbolic --agent hf:runs/policy-grpo --style policy

Each step takes the next training start (the SFT data's positions of ``--depths``: apart from every evaluated
position and from the probe, :mod:`.positions`), plays ``--group`` episodes of it with the policy agent
sampling at ``--temperature`` (the runner's episode loop: symbolic text, basic tools, the episode budget, the
env's ``--reward`` for shaping), scores each with :func:`cubebench.agents.episode_reward.episode_reward` (1 for
a solve plus ``--shaping-weight`` times its return: the verifiers bridge's rubric), and takes one AdamW step on
the group-relative policy gradient (:mod:`.grpo`) over up to ``--replies`` replies of each episode (a random
subset: an unbiased estimate of the whole episode's gradient at a fraction of its cost).  The group's episodes
are played at once, so their calls share forward passes.

Bounded by ``--steps`` (and ``--minutes``: no new step starts after that much time in steps, over every
session); a checkpoint every ``--save-every`` steps, and a rerun with the same ``--out`` resumes.  As with
:mod:`.policy_sft`: the arguments are read before torch is imported, every phase prints a line, Ctrl-C or SIGTERM
stops within a second or so with the command that resumes (:mod:`.program`), and damaged files are named.
``OUT/training.json`` has each step's mean reward, solve rate, loss and time (the reward curve) and the final
probe accuracy.
"""

from __future__ import annotations

import argparse
import sys
import threading
import time
from pathlib import Path
from typing import Any, Sequence

from cubebench.agents.episode import run_episode
from cubebench.agents.episode_reward import episode_reward
from cubebench.agents.llm.hf import HFModel, HFModelClient
from cubebench.agents.policy import PolicyAgent, parse_policy_reply

from .grpo import add_rollout_options, group_advantages, policy_gradient_loss, reply_logprobs
from .integrity import check_safetensors, read_json
from .models import adapter_training_base, busy_machine_hint, choose_precision, load_trainable, set_threads
from .policy_data import PolicyEncoder, check_data, read_positions
from .probe import measure_probe
from .program import THREADS_HELP, Session, run_program
from .run_state import RunState, save_adapter
from .stopping import StopRequested, interruptible

_PROG = "python -m cubebench.training.policy_grpo"
__all__ = ["main", "parse_args"]


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog=_PROG, description=(__doc__ or "").split("\n\n")[0])
    p.add_argument("--adapter", type=Path, required=True, help="the SFT adapter to start from (policy_sft's --out)")
    p.add_argument("--out", type=Path, default=Path("runs/policy-grpo"), help="the new adapter's folder")
    p.add_argument("--steps", type=int, default=60, help="optimizer steps, one group each (default %(default)s)")
    p.add_argument("--minutes", type=float, default=30.0, help="no step starts after this much time (all sessions)")
    p.add_argument("--depths", default="5,6,7", help="depths of the training starts")
    add_rollout_options(p)
    p.add_argument("--replies", type=int, default=4, help="replies of each episode in the loss (a random subset)")
    p.add_argument("--lr", type=float, default=2e-5)
    p.add_argument("--save-every", type=int, default=5)
    p.add_argument("--precision", default="auto", help="auto, fp32 or bf16 (the update's matrix products)")
    p.add_argument("--threads", type=int, default=None, help=THREADS_HELP)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    for name in ("steps", "group", "replies", "save_every"):
        if getattr(args, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be at least 1")
    if args.group < 2:
        p.error("--group must be at least 2 (advantages are relative to the group)")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parse_args(argv)  # before torch: --help and a wrong argument answer at once
    return run_program("policy_grpo", _PROG, argv, args.out, lambda session: _run(args, session))


def _run(args: argparse.Namespace, session: Session) -> int:
    import numpy as np


    resumed = RunState.resumable(args.out, vars(args), log=session.say)  # before anything slow
    try:
        depths = tuple(int(d) for d in args.depths.split(","))
    except ValueError:
        raise ValueError(f"--depths is a comma-separated list of whole numbers, not {args.depths!r}") from None
    check_data(args.adapter / "data")
    starts = [p for p in read_positions(args.adapter / "data" / "train.jsonl") if p.distance in depths]
    if not starts:
        raise ValueError(f"{args.adapter / 'data'} holds no training positions of depth {args.depths}")
    probe = read_positions(args.adapter / "data" / "probe.jsonl")
    read_json(args.adapter / "adapter_config.json")
    check_safetensors(args.adapter / "adapter_model.safetensors")
    precision, threads = choose_precision(args.precision), set_threads(args.threads)
    hint = busy_machine_hint(threads)
    if hint:
        session.say(hint)
    session.phase = "while loading the model"
    session.say(f"loading the base and {args.out / 'checkpoint' if resumed else args.adapter} ({threads} threads, "
                f"{precision})")
    started = time.monotonic()
    tokenizer, model = load_trainable(adapter_training_base(args.adapter),
                                      adapter=args.out / "checkpoint" if resumed else args.adapter)
    session.say(f"loaded in {time.monotonic() - started:.0f} s; {len(starts)} training starts")
    order = np.random.default_rng(args.seed).permutation(len(starts))
    state = train(args, model, tokenizer, [starts[k] for k in order], probe, precision, threads, session, resumed)
    session.phase = "while writing the adapter"
    save_adapter(model, args.out, half=True)
    state.write_summary(args.out / "training.json")
    session.say(f"adapter in {args.out} ({state.step} steps, {state.seconds / 60:.1f} min); play it with "
                f"--agent hf:{args.out} --style policy")
    return 0


def train(args: argparse.Namespace, model: Any, tokenizer: Any, starts: list, probe: list, precision: str,
          threads: int, session: Session, resumed: dict[str, Any] | None) -> RunState:
    """Steps until ``--steps`` or ``--minutes``, then the final probe; a stop signal cuts the step in flight, a
    checkpoint of the steps done is written, and the signal goes on up."""
    import numpy as np
    import torch



    encoder = PolicyEncoder(tokenizer, "quarter")
    policy = HFModel(model=model, tokenizer=tokenizer, device="cpu", name=f"grpo:{args.adapter}")
    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(params, lr=args.lr, weight_decay=0.0)
    state = RunState.start(args.out, vars(args), {"starts": len(starts)}, {"precision": precision, "threads": threads},
                           resumed)
    session.state = state
    state.restore(optimizer)
    stop = session.stop
    hooks = interruptible(params)
    try:
        while state.step < args.steps and state.seconds < args.minutes * 60:
            session.phase = f"in step {state.step + 1} of {args.steps}"
            started = time.monotonic()
            start = starts[state.step % len(starts)]
            model.eval()
            records = rollouts(args, policy, start.facelets, start.distance)
            rewards = [reward for reward, _, _ in records]
            advantages = group_advantages(rewards)
            value = None
            if any(advantages):
                rng = np.random.default_rng([args.seed, state.step])
                pairs, weights = [], []
                for (_, _, taken), advantage in zip(records, advantages):
                    chosen: list[int] = rng.permutation(len(taken))[:args.replies].tolist() if taken else []
                    for k in chosen:
                        prompt, move = taken[k]
                        pairs.append((encoder.prompt(prompt), encoder.replies[move]))
                        weights.append(advantage)
                if pairs:
                    model.train()
                    value = policy_gradient_loss(reply_logprobs(model, pairs, precision=precision), weights)
                    optimizer.zero_grad(set_to_none=True)
                    value.backward()
            with stop.deferred():  # an optimizer step is never cut half way
                loss = 0.0
                if value is not None:
                    torch.nn.utils.clip_grad_norm_(params, 1.0)
                    optimizer.step()
                    loss = float(value.detach())
                state.step += 1
                state.log_step(reward=sum(rewards) / len(rewards), solved=sum(s for _, s, _ in records) / len(records),
                               loss=loss, depth=start.distance, skipped=not any(advantages),
                               seconds=time.monotonic() - started)
            if state.step % args.save_every == 0:
                session.phase = f"while writing the checkpoint at step {state.step}"
                with stop.deferred():
                    state.save(model, optimizer)
        session.phase = "while measuring the probe on all its positions"
        measure_probe(state, model, tokenizer, probe, "quarter", None)
        with stop.deferred():
            state.save(model, optimizer)
    except StopRequested as err:
        optimizer.zero_grad(set_to_none=True)
        if not err.again and state.step > state.saved_step:
            with stop.deferred():
                state.save(model, optimizer, quiet=True)
        raise
    finally:
        for hook in hooks:
            hook.remove()
    return state


def rollouts(args: argparse.Namespace, policy: Any, facelets: str,
             depth: int) -> list[tuple[float, bool, list[tuple[str, str]]]]:
    """``--group`` sampled episodes from ``facelets``, played at once: ``(reward, solved, [(state, move)])``
    each, the moves being the replies that were legal moves."""
    import gymnasium as gym


    results: list[Any] = [None] * args.group
    failures: list[BaseException] = []

    def play(k: int) -> None:
        try:
            results[k] = one(k)
        except BaseException as err:  # noqa: BLE001 - handed to the caller's thread below
            failures.append(err)

    def one(k: int) -> tuple[float, bool, list[tuple[str, str]]]:
        client = HFModelClient(policy.name, loaded=policy, temperature=args.temperature)
        agent = PolicyAgent(client)
        env = gym.make("CubeBench-Symbolic-v0", depth=depth, obs_format="text", reward=args.reward)
        try:
            record = run_episode(agent, env, reset_options={"state": facelets}, distances="none",
                                 store_images=False)
        finally:
            client.close()
        taken = []
        for state_text, reply in agent.transcript:
            try:
                taken.append((state_text, parse_policy_reply(reply, agent.actions)))
            except ValueError:
                continue
        return episode_reward(record, args.shaping_weight), bool(record.solved), taken

    threads = [threading.Thread(target=play, args=(k,), daemon=True) for k in range(args.group)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if failures:
        raise failures[0]
    return results


if __name__ == "__main__":
    sys.exit(main())
