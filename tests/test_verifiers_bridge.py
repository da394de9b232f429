"""The verifiers bridge (cubebench.bridges.verifiers): rollout batches through a real OpenAI client against
our scripted loopback server, checked against our own runner and reward wrappers; argument errors; and a
GRPO step of a tiny random-weight model whose loss is built from the rubric's rewards."""

from __future__ import annotations

import json
import re
from typing import Any

import gymnasium as gym
import pytest

from conftest import extra_reason, needs

pytest.importorskip("verifiers", reason=extra_reason("verifiers"))
pytest.importorskip("openai", reason=extra_reason("openai"))

import verifiers as vf  # noqa: E402
from openai import AsyncOpenAI  # noqa: E402

import cubebench  # noqa: E402
from cubebench.agents.actions import FORMAT_HINT  # noqa: E402
from cubebench.agents.llm.testing import RecordedRequest, ScriptedServer, Step  # noqa: E402
from cubebench.agents.records import EpisodeRecord  # noqa: E402
from cubebench.bridges.verifiers import RECORD_KEY, CubeBenchEnv, load_environment  # noqa: E402
from cubebench.curriculum import load_instance_file  # noqa: E402
from cubebench.engine.moves import MOVE_NAMES  # noqa: E402
from cubebench.engine.notation import parse  # noqa: E402
from cubebench.runner.execute import PlaySettings, play_episode  # noqa: E402
from cubebench.runner.plan import EpisodeSpec  # noqa: E402
from cubebench.runner.specs import AgentFactory, AgentSpec  # noqa: E402
from cubebench.runner.suite_fields import SuiteError  # noqa: E402
from cubebench.shipped import largest_instance_file  # noqa: E402

MALFORMED = "I would turn the top face now."
"""A reply without an ``Action:`` line."""


def shipped(depth: int, metric: str = "quarter") -> list[tuple[str, str]]:
    """(54-letter state, the moves that solve it) of every shipped certified instance of ``depth``."""
    path = largest_instance_file(metric, depth)
    assert path is not None
    out = []
    for inst in load_instance_file(path):
        names = [MOVE_NAMES[m] for m in parse(inst.scramble)]
        out.append((inst.state, " ".join(n[0] if n.endswith("'") else n if n.endswith("2") else n + "'"
                                         for n in reversed(names))))
    return out


def start_state(request: RecordedRequest) -> str:
    """The 54-letter start state in the first observation of a request."""
    found = re.search(r"\b[URFDLB]{54}\b", request.body["messages"][1]["content"])
    assert found is not None, request.body["messages"][1]
    return found.group(0)


def client(server: ScriptedServer) -> Any:
    return vf.OpenAIChatCompletionsClient(AsyncOpenAI(base_url=server.base_url, api_key="none", max_retries=0))


def evaluate(env: CubeBenchEnv, server: ScriptedServer, rollouts: int = 1) -> list[dict[str, Any]]:
    results = env.evaluate_sync(client(server), "scripted", rollouts_per_example=rollouts, max_concurrent=4,
                                state_columns=[RECORD_KEY])
    return list(results["outputs"])


def record(output: dict[str, Any]) -> EpisodeRecord:
    return EpisodeRecord.from_dict(output[RECORD_KEY])


def spec_of(output: dict[str, Any]) -> EpisodeSpec:
    info = output["info"]
    return EpisodeSpec(**(json.loads(info) if isinstance(info, str) else info))


def test_a_rollout_batch_scores_solves_budgets_and_malformed_replies_as_our_runner_does() -> None:
    """Four depth-1 instances, two rollouts each, played concurrently: instance 0 gets a solving reply
    (reward 1 in one step), 1 a move that does not solve, repeated until the 3-move budget ends the episode,
    2 a malformed reply every turn (parse errors until the 4-step budget), 3 a solve after a malformed turn."""
    starts = shipped(1)
    role = {state: k for k, (state, _) in enumerate(starts[:4])}

    def reply_to(request: RecordedRequest) -> Step:
        k = role[start_state(request)]
        turn = sum(1 for m in request.body["messages"] if m["role"] == "assistant")
        if k == 0 or (k == 3 and turn == 1):
            return Step.reply(f"Thought: undo the scramble.\nAction: move(\"{starts[k][1]}\")")
        if k == 1:
            wrong = "U" if starts[k][1] not in ("U", "U'") else "R"
            return Step.reply(f"Thought: try a turn.\nAction: move(\"{wrong}\")")
        return Step.reply(MALFORMED)

    env = load_environment(depths=[1], instances=0, eval_instances=4, max_steps=4, max_moves=3)
    with ScriptedServer(reply_to) as server:
        outputs = evaluate(env, server, rollouts=2)
        sent = [r.body for r in server.requests]
    assert len(outputs) == 8
    by_instance: dict[int, list[dict[str, Any]]] = {}
    for out in outputs:
        by_instance.setdefault(spec_of(out).instance, []).append(out)
    assert sorted(by_instance) == [0, 1, 2, 3] and all(len(v) == 2 for v in by_instance.values())
    expect = {0: (1.0, "solved", 1, 1, 0), 1: (0.0, "failed", 3, 3, 0), 2: (0.0, "failed", 4, 0, 4),
              3: (1.0, "solved", 2, 1, 1)}
    for k, outs in by_instance.items():
        for out in outs:
            rec = record(out)
            reward, status, steps, moves, parse_errors = expect[k]
            assert out["reward"] == reward, (k, out["metrics"])
            assert (rec.status, rec.n_steps, rec.n_moves, rec.parse_errors) == (status, steps, moves, parse_errors), k
            assert out["metrics"]["solved"] == reward and out["metrics"]["steps"] == steps
            assert out["metrics"]["moves"] == moves and out["metrics"]["parse_errors"] == parse_errors
            assert out["metrics"]["num_turns"] == steps  # one model turn per interaction step
            assert out["stop_condition"] == "has_final_env_response"
    # the move budget (3 quarter turns) ended instance 1 after 3 steps, not the 4-step budget
    assert "Episode over: failed after 3 steps and 3 moves" in _text(by_instance[1][0]["completion"][-1])
    # a malformed reply is shown our parser's message and counts as a step
    second = next(b for b in sent if role[_state_in(b)] == 2 and sum(m["role"] == "assistant" for m in b["messages"]) == 1)
    assert "no 'Action:' line found in your reply" in second["messages"][-1]["content"]
    assert FORMAT_HINT in second["messages"][-1]["content"]
    # every call carries the ReAct agent's stop sequence and token limit
    assert all(b["stop"] == ["Observation:"] and b.get("max_tokens", b.get("max_completion_tokens")) == 256
               for b in sent)


def _state_in(body: dict[str, Any]) -> str:
    found = re.search(r"\b[URFDLB]{54}\b", body["messages"][1]["content"])
    assert found is not None
    return found.group(0)


def _text(message: Any) -> str:
    content = message["content"] if isinstance(message, dict) else message.content
    return content if isinstance(content, str) else "".join(p.get("text", "") for p in content)


@pytest.mark.parametrize("instance", [1, 2])
def test_the_model_sees_what_our_runner_shows_the_react_agent_and_the_records_agree(instance: int) -> None:
    """The same scripted replies through verifiers and through ``play_episode`` (our runner, the ReAct
    agent over our own OpenAI client): the same requests and the same episode record."""
    replies = ["Thought: a\nAction: move(\"U\")", MALFORMED, "Thought: c\nAction: move(\"R R'\")"]
    env = load_environment(depths=[2], instances=0, eval_instances=instance + 1, max_steps=3, seed=7)
    rows = env.get_eval_dataset()
    spec = EpisodeSpec(**json.loads(rows[instance]["info"]))
    with ScriptedServer(list(replies)) as server:
        ours = play_episode(spec, AgentFactory(AgentSpec(spec=f"openai-compatible:{server.base_url}:scripted")),
                            PlaySettings(store_images=False))
        ours_sent = [r.body["messages"] for r in server.requests]
    one = env.get_eval_dataset().select([instance])
    with ScriptedServer(list(replies)) as server:
        (out,) = env.generate_sync(one, client=client(server), model="scripted", state_columns=[RECORD_KEY])["outputs"]
        theirs_sent = [r.body["messages"] for r in server.requests]
    assert [[(m["role"], m["content"]) for m in call] for call in ours_sent] == \
           [[(m["role"], m["content"]) for m in call] for call in theirs_sent]
    assert [(m["role"], m["content"]) for m in rows[instance]["prompt"]] == \
           [(m["role"], m["content"]) for m in ours_sent[0]]  # the dataset's prompt is the first call's
    theirs = record(out)
    for field in ("status", "n_steps", "n_moves", "parse_errors", "errors", "start_facelets", "end_facelets",
                  "total_reward", "solved"):
        assert getattr(ours, field) == getattr(theirs, field), field
    assert [s.action for s in ours.steps] == [s.action for s in theirs.steps]
    assert [s.observation_text for s in ours.steps] == [s.observation_text for s in theirs.steps]


@pytest.mark.parametrize("reward", ["sticker", "face", "heuristic"])
def test_dense_shaping_is_the_return_of_our_reward_wrapper(reward: str) -> None:
    """The rubric's shaping is the sum of the reward wrapper's rewards over the moves made, computed here
    by stepping the Gymnasium env by hand; the rollout's reward adds it (weight 1) to the sparse 0."""
    moves = ["U", "R'", "F2"]
    replies = [f"Thought: t\nAction: move(\"{m}\")" for m in moves]
    env = load_environment(depths=[1], instances=1, eval_instances=0, reward=reward, max_steps=3)
    rows = env.get_dataset()
    spec = EpisodeSpec(**json.loads(rows[0]["info"]))
    with ScriptedServer(list(replies)) as server:
        (out,) = env.generate_sync(rows, client=client(server), model="scripted", state_columns=[RECORD_KEY])["outputs"]
    gym_env = gym.make(cubebench.TIERS["symbolic"], depth=1, reward=reward, metric="quarter", max_steps=None,
                       obs_format="text")
    gym_env.reset(seed=spec.env_seed, options=spec.reset_options)
    names = list(gym_env.unwrapped.action_names)
    expected = 0.0
    for name in " ".join(moves).replace("F2", "F F").split():
        _, r, terminated, truncated, _ = gym_env.step(names.index(name))
        expected += float(r)
        assert not terminated and not truncated
    gym_env.close()
    assert record(out).n_moves == 4 and not record(out).solved
    assert out["metrics"]["shaping"] == pytest.approx(expected)
    assert expected != 0.0  # the moves change the potential: the check compares real numbers
    assert out["metrics"]["solved"] == 0.0
    assert out["reward"] == pytest.approx(expected)


@pytest.mark.parametrize("reward, weight", [("none", None), ("sticker", 0.5), ("heuristic", None)])
def test_the_reward_is_success_plus_the_weighted_shaping(reward: str, weight: float | None) -> None:
    """A one-move solve: reward 1 under the sparse reward (whose return is only a metric), and
    1 + weight x the dense return under a dense one (weight 1 by default)."""
    (state, solution), = shipped(1)[:1]
    env = load_environment(depths=[1], instances=1, eval_instances=0, reward=reward, shaping_weight=weight)
    with ScriptedServer([f"Thought: undo\nAction: move(\"{solution}\")"]) as server:
        (out,) = env.generate_sync(env.get_dataset(), client=client(server), model="scripted",
                                   state_columns=[RECORD_KEY])["outputs"]
    assert out["metrics"]["solved"] == 1.0 and record(out).total_reward == out["metrics"]["shaping"]
    if reward == "none":
        assert out["reward"] == 1.0
    else:
        assert out["metrics"]["shaping"] > 0  # solving raises every potential
        assert out["reward"] == pytest.approx(1.0 + (weight or 1.0) * out["metrics"]["shaping"])


def test_partial_and_visual_tiers_play_in_their_text_forms() -> None:
    for tier in ("visual", "face", "vertex"):
        env = load_environment(tier=tier, depths=[1], instances=1, eval_instances=0)
        (row,) = env.get_dataset()
        first = row["prompt"][1]["content"]
        assert isinstance(first, str) and "attached as an image" not in first
        assert EpisodeSpec(**json.loads(row["info"])).tier == tier


def test_vf_load_environment_finds_the_module_and_rows_are_seeded() -> None:
    env = vf.load_environment("cubebench.bridges.verifiers", depths=[2, 3], instances=2, eval_instances=1, seed=3)
    again = load_environment(depths=[2, 3], instances=2, eval_instances=1, seed=3)
    train, test = env.get_dataset(), env.get_eval_dataset()
    assert len(train) == 4 and len(test) == 2
    assert train["info"] == again.get_dataset()["info"] and train["prompt"] == again.get_dataset()["prompt"]
    starts = {row["prompt"][1]["content"] for row in train}
    assert not starts & {row["prompt"][1]["content"] for row in test}  # no start state in both splits
    assert sorted(int(a) for a in train["answer"]) == [2, 2, 3, 3]  # the certified distances


@pytest.mark.parametrize("kwargs, message", [
    ({"tier": "hologram"}, "tier must be one of"),
    ({"reward": "oracle"}, "reward must be one of"),
    ({"tool_setting": "magic"}, "tool_setting must be one of"),
    ({"shaping_weight": 1.0}, "needs a dense reward"),
    ({"reward": "sticker", "shaping_weight": -1}, "shaping_weight must be a number >= 0"),
    ({"instances": -1}, "instances must be an integer >= 0"),
    ({"instances": 0, "eval_instances": 0}, "no rows"),
    ({"max_tokens": 0}, "max_tokens must be an integer >= 1"),
])
def test_bad_arguments_fail_with_a_clear_message(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        load_environment(**{"depths": [1], **kwargs})


@pytest.mark.parametrize("kwargs, message", [
    ({"depths": []}, "depths must be a non-empty list"),
    ({"depths": [1], "metric": "diagonal"}, "metric"),
    ({"depths": [1], "max_steps": 0}, "max_steps"),
    ({"depths": [1], "max_moves": 0}, "max_moves"),
    ({"depths": [1], "instance_source": "somewhere"}, "instance_source"),
])
def test_bad_grid_values_fail_as_the_runner_suites_do(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(SuiteError, match=message):
        load_environment(**kwargs)


# --------------------------------------------------------------------------- a GRPO step, plain torch

ACTIONS = tuple(f'Action: move("{m}")' for m in ("U", "U'", "D", "D'", "L", "L'", "R", "R'", "F", "F'", "B", "B'"))
"""The tiny policy's replies: one token each (added tokens of its tokenizer), so every reply is an action."""
CONTEXT = 256
"""The tiny model reads the last 256 characters of the conversation."""


class TinyPolicy:
    """A randomly initialised 2-layer GPT-2 over a character tokenizer built in code (no download), that
    answers the scripted server's requests by sampling one of :data:`ACTIONS`."""

    def __init__(self, seed: int) -> None:
        import threading

        import torch
        from tokenizers import Tokenizer, models
        from transformers import GPT2Config, GPT2LMHeadModel

        torch.manual_seed(seed)
        chars = [chr(c) for c in range(32, 127)] + ["\n"]
        self.tokenizer = Tokenizer(models.BPE(vocab={c: i for i, c in enumerate(["[UNK]", *chars])}, merges=[],
                                              unk_token="[UNK]"))
        self.tokenizer.add_tokens(list(ACTIONS))
        self.action_ids = [self.tokenizer.token_to_id(a) for a in ACTIONS]
        config = GPT2Config(vocab_size=self.tokenizer.get_vocab_size(), n_positions=CONTEXT, n_embd=32, n_layer=2,
                            n_head=2)
        self.model = GPT2LMHeadModel(config)
        self.generator = torch.Generator().manual_seed(seed)
        self.lock = threading.Lock()

    def context_ids(self, messages: list[Any]) -> list[int]:
        text = "\n".join(f"{_role(m)}: {_text(m)}" for m in messages) + "\nassistant: "
        return self.tokenizer.encode(text).ids[-CONTEXT:]

    def action_logprobs(self, messages: list[Any]) -> Any:
        """Log-probabilities of the actions after ``messages`` (the policy: the model restricted to them)."""
        import torch

        ids = torch.tensor([self.context_ids(messages)])
        logits = self.model(input_ids=ids).logits[0, -1, self.action_ids]
        return torch.log_softmax(logits, dim=-1)

    def respond(self, request: RecordedRequest) -> Step:
        import torch

        with self.lock, torch.no_grad():
            probs = self.action_logprobs(request.body["messages"]).exp()
            choice = int(torch.multinomial(probs, 1, generator=self.generator))
        return Step.reply(ACTIONS[choice])


def _role(message: Any) -> str:
    return message["role"] if isinstance(message, dict) else message.role


def grpo_step(policy: TinyPolicy, outputs: list[dict[str, Any]], lr: float = 0.05) -> tuple[float, list[float], float]:
    """One GRPO update on one group: advantages ``(r - mean) / (std + eps)`` of the rubric's rewards weight
    the summed log-probabilities of each rollout's sampled replies; one SGD step.  Returns the loss, the
    advantages and the gradient's norm."""
    import torch

    rewards = torch.tensor([float(o["reward"]) for o in outputs])
    advantages = (rewards - rewards.mean()) / (rewards.std() + 1e-6)
    optimizer = torch.optim.SGD(policy.model.parameters(), lr=lr)
    optimizer.zero_grad()
    terms = []
    for out, advantage in zip(outputs, advantages):
        conversation = list(out["prompt"]) + list(out["completion"])
        logprob = torch.zeros(())
        for i, message in enumerate(conversation):
            if _role(message) == "assistant":
                logprob = logprob + policy.action_logprobs(conversation[:i])[ACTIONS.index(_text(message))]
        terms.append(-advantage * logprob)
    loss = torch.stack(terms).mean()
    loss.backward()
    norm = float(torch.sqrt(sum((p.grad ** 2).sum() for p in policy.model.parameters() if p.grad is not None)))
    optimizer.step()
    return float(loss.detach()), advantages.tolist(), norm


@needs("torch", "transformers", "tokenizers")
def test_a_grpo_step_on_a_tiny_random_model_moves_the_weights_by_the_rubric_rewards() -> None:
    """A tiny random-weight causal LM (built here, nothing downloaded) plays a group of 8 rollouts of one
    depth-1 instance through the OpenAI endpoint under the sticker reward; group-relative advantages of the
    rubric's rewards weight the log-probabilities of its sampled replies, and one optimizer step changes
    the weights.  With equal rewards the same rollouts give no gradient: the reward is what moves them."""
    import torch

    torch.set_num_threads(1)
    env = load_environment(depths=[1], instances=1, eval_instances=0, reward="sticker", max_steps=2)
    policy = TinyPolicy(seed=0)
    with ScriptedServer(policy.respond) as server:
        outputs = env.generate_sync(env.get_dataset().repeat(8), client=client(server), model="tiny",
                                    state_columns=[RECORD_KEY])["outputs"]
    rewards = [o["reward"] for o in outputs]
    assert len(outputs) == 8 and len(set(rewards)) > 1, rewards  # the rollouts differ: advantages are not all 0
    assert all(record(o).n_steps >= 1 and record(o).parse_errors == 0 for o in outputs)
    flat = [{**o, "reward": 0.5} for o in outputs]
    _, zero, zero_norm = grpo_step(policy, flat, lr=0.0)
    assert all(a == 0.0 for a in zero) and zero_norm == 0.0
    before = [p.detach().clone() for p in policy.model.parameters()]
    loss, advantages, norm = grpo_step(policy, outputs)
    assert sum(advantages) == pytest.approx(0.0, abs=1e-5) and norm > 0 and loss == loss  # finite
    assert any(bool((p.detach() != b).any()) for p, b in zip(policy.model.parameters(), before))
