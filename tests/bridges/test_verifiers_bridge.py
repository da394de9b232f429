"""The verifiers bridge (cubebench.bridges.verifiers) under the installed verifiers API, 0.4 (``verifiers.v1``)
or 0.3 (``vf.MultiTurnEnv``; CI's separate job, .ci/run): rollout batches through a real OpenAI-compatible
client against our scripted loopback server, checked against our own runner and reward wrappers; argument
errors; the loader's warning when a depth has fewer rows than asked; and a GRPO step of a tiny
random-weight model whose loss is built from the rewards.  The scenarios are written once; :func:`play` and
:func:`rows` read them through each API."""

from __future__ import annotations

import asyncio
import json
import logging
import re
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest

from helpers import extra_reason, needs

pytest.importorskip("verifiers", reason=extra_reason("verifiers"))
pytest.importorskip("openai", reason=extra_reason("openai"))

import verifiers  # noqa: E402

import cubebench  # noqa: E402
from cubebench.agents.actions import FORMAT_HINT  # noqa: E402
from cubebench.agents.llm.testing import RecordedRequest, ScriptedServer, Step  # noqa: E402
from cubebench.agents.records import EpisodeRecord  # noqa: E402
from cubebench.bridges import verifiers as bridge  # noqa: E402
from cubebench.bridges.verifiers import RECORD_KEY, RowShortfallWarning  # noqa: E402
from cubebench.curriculum import load_instance_file  # noqa: E402
from cubebench.engine.moves import MOVE_NAMES  # noqa: E402
from cubebench.engine.notation import parse  # noqa: E402
from cubebench.runner.execute import PlaySettings
from cubebench.runner.protocols.episodes.play import play_episode
from cubebench.runner.protocols.episodes.plan import EpisodeSpec
from cubebench.runner.specs import AgentFactory, AgentSpec  # noqa: E402
from cubebench.runner.suite_fields import SuiteError  # noqa: E402
from cubebench.shipped import largest_instance_file  # noqa: E402

V1 = bridge.API == "v1"
"""verifiers 0.4 (``verifiers.v1``) is installed; else 0.2-0.3 (``vf.MultiTurnEnv``)."""
MALFORMED = "I would turn the top face now."
"""A reply without an ``Action:`` line."""


# --------------------------------------------------------------------------- one reading of both APIs

@dataclass
class Row:
    """A dataset row (0.3) or a task (0.4): the first prompt, the answer and the episode spec."""

    prompt: list[tuple[str, str]]
    answer: str
    spec: EpisodeSpec


@dataclass
class Outcome:
    """One rollout: its reward, its rewards and metrics by name, the episode record, the conversation, the
    model turns, and whether the episode (not verifiers) ended it."""

    reward: float
    metrics: dict[str, float]
    record: EpisodeRecord
    messages: list[dict[str, str]]
    turns: int
    ended_by_episode: bool


def make_env(split: str = "train", **kwargs: Any) -> Any:
    """``load_environment(**kwargs)``; under 0.4 on ``split`` (0.3 holds both splits)."""
    return bridge.load_environment(**kwargs, **({"split": split} if V1 else {}))


def _text(content: Any) -> str:
    if content is None:
        return ""
    return content if isinstance(content, str) else "".join(
        p.get("text", "") if isinstance(p, dict) else getattr(p, "text", "") for p in content)


def _plain(message: Any) -> dict[str, str]:
    if isinstance(message, dict):
        return {"role": message["role"], "content": _text(message.get("content"))}
    return {"role": message.role, "content": _text(message.content)}


def rows(env: Any, split: str = "train") -> list[Row]:
    if V1:
        return [Row([(m.role, _text(m.content)) for m in t.data.prompt], t.data.answer, EpisodeSpec(**t.data.info))
                for t in env.taskset]
    data = env.get_dataset() if split == "train" else env.get_eval_dataset()
    return [Row([(m["role"], m["content"]) for m in r["prompt"]], r["answer"], EpisodeSpec(**json.loads(r["info"])))
            for r in data]


def play(env: Any, server: ScriptedServer, split: str = "train", rollouts: int = 1,
         select: list[int] | None = None) -> list[Outcome]:
    """Roll out the split's rows (``select``: those indices only), ``rollouts`` times each, concurrently, with
    the model behind ``server`` through verifiers' own OpenAI-compatible client."""
    if V1:
        return _play_v1(env, server, rollouts, select)
    from openai import AsyncOpenAI

    client = verifiers.OpenAIChatCompletionsClient(AsyncOpenAI(base_url=server.base_url, api_key="none",
                                                                max_retries=0))
    data = env.get_dataset() if split == "train" else env.get_eval_dataset()
    data = data.select(select) if select is not None else data
    outputs = env.generate_sync(data.repeat(rollouts) if rollouts > 1 else data, client=client, model="scripted",
                                max_concurrent=4, state_columns=[RECORD_KEY])["outputs"]
    return [Outcome(float(o["reward"]), dict(o["metrics"]), EpisodeRecord.from_dict(o[RECORD_KEY]),
                    [_plain(m) for m in list(o["prompt"]) + list(o["completion"])], int(o["metrics"]["num_turns"]),
                    o["stop_condition"] == "has_final_env_response") for o in outputs]


def _play_v1(env: Any, server: ScriptedServer, rollouts: int, select: list[int] | None) -> list[Outcome]:
    import verifiers.v1 as vf

    tasks = list(env.taskset)
    tasks = [tasks[i] for i in select] if select is not None else tasks
    ctx = vf.ModelContext(model="scripted", client=vf.EvalClientConfig(base_url=server.base_url,
                                                                       api_key_var="CUBEBENCH_TEST_NO_KEY"))

    async def run() -> list[Any]:
        limit = asyncio.Semaphore(4)  # as 0.3's max_concurrent=4: the scripted server is a small threaded one

        async def one(task: Any) -> Any:
            async with limit:
                return await env.run_episode(task, ctx)

        async with env.serving():
            return await asyncio.gather(*(one(t) for t in tasks for _ in range(rollouts)))

    out = []
    for episode in asyncio.run(run()):
        assert episode.ok, episode.errors
        (trace,) = episode.traces
        scores = {name: r.score for name, r in trace.rewards.items() if r is not None}
        out.append(Outcome(float(trace.reward), {**scores, **trace.metrics}, bridge.record_of(trace.info),
                           [_plain(m) for m in trace.messages], trace.num_turns,
                           trace.stop_condition == "episode_over"))
    return out


# --------------------------------------------------------------------------- helpers


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


def _state_in(body: dict[str, Any]) -> str:
    found = re.search(r"\b[URFDLB]{54}\b", body["messages"][1]["content"])
    assert found is not None, body["messages"][1]
    return found.group(0)


def start_state(request: RecordedRequest) -> str:
    """The 54-letter start state in the first observation of a request."""
    return _state_in(request.body)


# --------------------------------------------------------------------------- rollouts


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

    env = make_env("eval", depths=[1], instances=0, eval_instances=4, max_steps=4, max_moves=3)
    with ScriptedServer(reply_to) as server:
        outcomes = play(env, server, "eval", rollouts=2)
        sent = [r.body for r in server.requests]
    assert len(outcomes) == 8
    by_instance: dict[int, list[Outcome]] = {}
    for out in outcomes:
        by_instance.setdefault(role[out.record.start_facelets], []).append(out)
    assert sorted(by_instance) == [0, 1, 2, 3] and all(len(v) == 2 for v in by_instance.values())
    expect = {0: (1.0, "solved", 1, 1, 0), 1: (0.0, "failed", 3, 3, 0), 2: (0.0, "failed", 4, 0, 4),
              3: (1.0, "solved", 2, 1, 1)}
    for k, outs in by_instance.items():
        for out in outs:
            rec = out.record
            reward, status, steps, moves, parse_errors = expect[k]
            assert out.reward == reward, (k, out.metrics)
            assert (rec.status, rec.n_steps, rec.n_moves, rec.parse_errors) == (status, steps, moves, parse_errors), k
            assert out.metrics["solved"] == reward and out.metrics["steps"] == steps
            assert out.metrics["moves"] == moves and out.metrics["parse_errors"] == parse_errors
            assert out.turns == steps  # one model turn per interaction step
            assert out.ended_by_episode
    if not V1:  # 0.3 ends the rollout with the outcome as the environment's last message
        assert "Episode over: failed after 3 steps and 3 moves" in by_instance[1][0].messages[-1]["content"]
    # a malformed reply is shown our parser's message and counts as a step
    second = next(b for b in sent if role[_state_in(b)] == 2 and sum(m["role"] == "assistant" for m in b["messages"]) == 1)
    assert "no 'Action:' line found in your reply" in second["messages"][-1]["content"]
    assert FORMAT_HINT in second["messages"][-1]["content"]
    # every call carries the ReAct agent's stop sequence and token limit
    assert all(b["stop"] == ["Observation:"] and b.get("max_tokens", b.get("max_completion_tokens")) == 256
               for b in sent)


@pytest.mark.parametrize("instance", [1, 2])
def test_the_model_sees_what_our_runner_shows_the_react_agent_and_the_records_agree(instance: int) -> None:
    """The same scripted replies through verifiers and through ``play_episode`` (our runner, the ReAct
    agent over our own OpenAI client): the same requests and the same episode record, replies kept whole
    (white space around them included)."""
    replies = ["Thought: a\nAction: move(\"U\")\n\n", MALFORMED, "  Thought: c\nAction: move(\"R R'\")"]
    env = make_env("eval", depths=[2], instances=0, eval_instances=instance + 1, max_steps=3, seed=7)
    spec = rows(env, "eval")[instance].spec
    with ScriptedServer(list(replies)) as server:
        ours = play_episode(spec, AgentFactory(AgentSpec(spec=f"openai-compatible:{server.base_url}:scripted")),
                            PlaySettings(store_images=False))
        ours_sent = [r.body["messages"] for r in server.requests]
    with ScriptedServer(list(replies)) as server:
        (out,) = play(env, server, "eval", select=[instance])
        theirs_sent = [r.body["messages"] for r in server.requests]
    assert [[(m["role"], m["content"]) for m in call] for call in ours_sent] == \
           [[(m["role"], m["content"]) for m in call] for call in theirs_sent]
    assert rows(env, "eval")[instance].prompt == [(m["role"], m["content"]) for m in ours_sent[0]]  # the first call
    theirs = out.record
    for field in ("status", "n_steps", "n_moves", "parse_errors", "errors", "start_facelets", "end_facelets",
                  "total_reward", "solved"):
        assert getattr(ours, field) == getattr(theirs, field), field
    assert [s.action for s in ours.steps] == [s.action for s in theirs.steps]
    assert [s.observation_text for s in ours.steps] == [s.observation_text for s in theirs.steps]
    assert [s.reply for s in ours.steps] == [s.reply for s in theirs.steps]
    assert [m["content"] for m in out.messages if m["role"] == "assistant"] == replies


@pytest.mark.parametrize("reward", ["sticker", "face", "heuristic"])
def test_dense_shaping_is_the_return_of_our_reward_wrapper(reward: str) -> None:
    """The shaping is the sum of the reward wrapper's rewards over the moves made, computed here by stepping
    the Gymnasium env by hand; the rollout's reward adds it (weight 1) to the sparse 0."""
    moves = ["U", "R'", "F2"]
    replies = [f"Thought: t\nAction: move(\"{m}\")" for m in moves]
    env = make_env(depths=[1], instances=1, eval_instances=0, reward=reward, max_steps=3)
    spec = rows(env)[0].spec
    with ScriptedServer(list(replies)) as server:
        (out,) = play(env, server)
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
    assert out.record.n_moves == 4 and not out.record.solved
    assert out.metrics["shaping"] == pytest.approx(expected)
    assert expected != 0.0  # the moves change the potential: the check compares real numbers
    assert out.metrics["solved"] == 0.0
    assert out.reward == pytest.approx(expected)


@pytest.mark.parametrize("reward, weight", [("none", None), ("sticker", 0.5), ("heuristic", None)])
def test_the_reward_is_success_plus_the_weighted_shaping(reward: str, weight: float | None) -> None:
    """A one-move solve: reward 1 under the sparse reward (whose return is only a metric), and
    1 + weight x the dense return under a dense one (weight 1 by default)."""
    (state, solution), = shipped(1)[:1]
    env = make_env(depths=[1], instances=1, eval_instances=0, reward=reward, shaping_weight=weight)
    with ScriptedServer([f"Thought: undo\nAction: move(\"{solution}\")"]) as server:
        (out,) = play(env, server)
    assert out.metrics["solved"] == 1.0 and out.record.total_reward == out.metrics["shaping"]
    if reward == "none":
        assert out.reward == 1.0
    else:
        assert out.metrics["shaping"] > 0  # solving raises every potential
        assert out.reward == pytest.approx(1.0 + (weight or 1.0) * out.metrics["shaping"])


def test_a_model_that_fails_ends_the_episode_as_an_error_scored_zero() -> None:
    """The model endpoint answers 500 on every call: no rollout crashes; each ends with an ``error`` episode
    (or verifiers' own error) and reward 0."""
    env = make_env(depths=[1], instances=1, eval_instances=0, max_steps=3)
    with ScriptedServer(lambda request: Step.http_error(500)) as server:
        if V1:
            import verifiers.v1 as vf

            (task,) = list(env.taskset)
            ctx = vf.ModelContext(model="scripted", client=vf.EvalClientConfig(base_url=server.base_url,
                                                                               api_key_var="CUBEBENCH_TEST_NO_KEY"))

            async def run() -> Any:
                async with env.serving():
                    return await env.run_episode(task, ctx)

            episode = asyncio.run(run())
            (trace,) = episode.traces
            assert not episode.ok and trace.errors  # verifiers counts it as an error
            assert trace.reward == 0.0 and bridge.record_of(trace.info).status == "error"
        else:
            from openai import AsyncOpenAI

            client = verifiers.OpenAIChatCompletionsClient(AsyncOpenAI(base_url=server.base_url, api_key="none",
                                                                        max_retries=0))
            (out,) = env.generate_sync(env.get_dataset(), client=client, model="scripted",
                                       state_columns=[RECORD_KEY])["outputs"]
            assert out["reward"] == 0.0 and EpisodeRecord.from_dict(out[RECORD_KEY]).status == "error"


def test_partial_and_visual_tiers_play_in_their_text_forms() -> None:
    for tier in ("visual", "face", "vertex"):
        env = make_env(tier=tier, depths=[1], instances=1, eval_instances=0)
        (row,) = rows(env)
        first = row.prompt[1][1]
        assert isinstance(first, str) and "attached as an image" not in first
        assert row.spec.tier == tier


def test_rows_are_seeded_certified_and_the_splits_disjoint() -> None:
    train, test = (rows(make_env(split, depths=[2, 3], instances=2, eval_instances=1, seed=3), split)
                   for split in ("train", "eval"))
    again = rows(make_env(depths=[2, 3], instances=2, eval_instances=1, seed=3))
    assert len(train) == 4 and len(test) == 2
    assert [r.spec for r in train] == [r.spec for r in again] and [r.prompt for r in train] == [r.prompt for r in again]
    assert not {r.prompt[1][1] for r in train} & {r.prompt[1][1] for r in test}  # no start state in both splits
    assert sorted(int(r.answer) for r in train) == [2, 2, 3, 3]  # the certified distances


@pytest.mark.skipif(V1, reason="verifiers 0.3's loader (vf.load_environment by module name)")
def test_vf_load_environment_finds_the_module_under_0_3() -> None:
    env = verifiers.load_environment("cubebench.bridges.verifiers", depths=[2, 3], instances=2, eval_instances=1,
                                     seed=3)
    assert isinstance(env, bridge.CubeBenchEnv)
    assert env.get_dataset()["info"] == make_env(depths=[2, 3], instances=2, eval_instances=1, seed=3).get_dataset()["info"]


@pytest.mark.skipif(not V1, reason="verifiers 0.4's plugin loader (ids)")
def test_verifiers_v1_finds_the_taskset_env_and_harness_by_id() -> None:
    """verifiers 0.4 resolves the ``cubebench`` id to our taskset, environment and harness (its ``vf-eval``
    and trainers build environments this way), with the taskset's options as config fields."""
    import verifiers.v1 as vf

    config = vf.resolve_env_config({"taskset": {"id": "cubebench", "depths": [2, 3], "instances": 2,
                                                "eval_instances": 1, "seed": 3, "split": "eval"}})
    env = vf.load_environment(config)
    assert isinstance(env, bridge.CubeBenchEnv) and isinstance(env.taskset, bridge.ADAPTER.CubeBenchTaskset)
    assert config.agent_harnesses()["player"].id == "cubebench"
    assert [r.spec for r in rows(env)] == [r.spec for r in rows(make_env("eval", depths=[2, 3], instances=2,
                                                                          eval_instances=1, seed=3))]
    with pytest.raises(ValueError, match="tier must be one of"):
        vf.load_environment(vf.resolve_env_config({"taskset": {"id": "cubebench", "tier": "hologram"}}))


@pytest.mark.skipif(not V1, reason="verifiers 0.4's rollout close-out")
def test_verifiers_v1_sees_the_reward_when_the_rollout_closes(caplog: pytest.LogCaptureFixture) -> None:
    """The trace is scored before the interaction closes, so verifiers' own close-out (its log, its live
    views) reports the episode's reward and why it stopped, not a 0 before scoring."""
    (state, solution), = shipped(1)[:1]
    env = make_env(depths=[1], instances=1, eval_instances=0)
    caplog.set_level(logging.INFO, logger="verifiers.v1.rollout")
    with ScriptedServer([f"Thought: undo\nAction: move(\"{solution}\")"]) as server:
        (out,) = play(env, server)
    done = [r.getMessage() for r in caplog.records if r.getMessage().startswith("rollout done")]
    assert out.reward == 1.0 and len(done) == 1
    assert "reward=1.000" in done[0] and "stop=episode_over" in done[0]


def test_the_split_argument_belongs_to_the_installed_api() -> None:
    if V1:
        with pytest.raises(ValueError, match="split must be 'train' or 'eval'"):
            bridge.load_environment(depths=[2], split="test")
        with pytest.raises(ValueError, match="the eval split has no rows"):
            bridge.load_environment(depths=[2], instances=1, eval_instances=0, split="eval")
    else:
        with pytest.raises(ValueError, match="split is for verifiers 0.4"):
            bridge.load_environment(depths=[2], split="eval")


def docs_example(api: str) -> str:
    """The Python example of docs/ecosystem.md for verifiers ``api`` (its first line: ``# verifiers 0.4``)."""
    text = (Path(__file__).resolve().parents[2] / "docs" / "ecosystem.md").read_text(encoding="utf-8")
    blocks = [b for b in re.findall(r"```python\n(.*?)```", text, flags=re.S) if b.startswith(f"# verifiers {api}\n")]
    assert len(blocks) == 1, f"docs/ecosystem.md has {len(blocks)} examples for verifiers {api}"
    return blocks[0]


def test_the_docs_example_for_the_installed_verifiers_runs_as_written(capsys: pytest.CaptureFixture[str]) -> None:
    """The example of docs/ecosystem.md for the installed API, with only its server address pointed at the
    scripted server, whose model undoes each scramble in one reply: every rollout it prints solved, reward
    1 + the dense return, one move or two."""
    solutions = dict(shipped(1) + shipped(2))
    code = docs_example("0.4" if V1 else "0.3")
    assert code.count("http://127.0.0.1:8000/v1") == 1
    with ScriptedServer(lambda r: Step.reply(f'Thought: undo\nAction: move("{solutions[start_state(r)]}")')) as server:
        exec(compile(code.replace("http://127.0.0.1:8000/v1", server.base_url), "docs/ecosystem.md", "exec"), {})
        calls = len(server.requests)
    printed = [line.split() for line in capsys.readouterr().out.splitlines()]
    assert calls == 32 and len(printed) == 4  # 8 eval rows x 4 rollouts, one call each; the first 4 printed
    for reward, solved, moves, stop in printed:
        assert float(reward) > 1.0 and float(solved) == 1.0 and float(moves) in (1.0, 2.0)
        assert stop == ("episode_over" if V1 else "has_final_env_response")


# --------------------------------------------------------------------------- rows asked for and rows given


def test_the_loader_warns_when_a_depth_has_fewer_rows_than_asked() -> None:
    """Quarter-turn depth 1 has 12 start states: asking 20 + 5 gives 12 train rows and no eval row, with a
    warning that says so and why; depth 2 (enough states) gives all its rows and is not named."""
    with pytest.warns(RowShortfallWarning) as caught:
        env = make_env(depths=[1, 2], instances=20, eval_instances=5)
    (warning,) = [w for w in caught if issubclass(w.category, RowShortfallWarning)]
    message = str(warning.message)
    assert "depth 1: train 12 of 20, eval 0 of 5" in message
    assert "only 12 distinct start states exist at quarter-turn distance 1" in message
    assert "depth 2" not in message
    depths = [r.spec.depth for r in rows(env)]
    assert depths.count(1) == 12 and depths.count(2) == 20
    with warnings.catch_warnings():
        warnings.simplefilter("error", RowShortfallWarning)  # the documented way to make it an error
        with pytest.raises(RowShortfallWarning, match="depth 1: train 12 of 20"):
            make_env(depths=[1, 2], instances=20, eval_instances=5)


def test_the_loader_names_the_eval_split_when_only_it_falls_short() -> None:
    with pytest.warns(RowShortfallWarning, match=r"depth 1: train 10 of 10, eval 2 of 5 \(only 12 distinct"):
        make_env(depths=[1], instances=10, eval_instances=5)


def test_no_warning_when_every_row_asked_for_exists() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error", RowShortfallWarning)
        env = make_env(depths=[1, 2], instances=8, eval_instances=4)
        make_env(depths=[3], instances=3, eval_instances=2, instance_source="scramble")
    assert len(rows(env)) == 16


# --------------------------------------------------------------------------- bad arguments


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
        bridge.load_environment(**{"depths": [1], **kwargs})


@pytest.mark.parametrize("kwargs, message", [
    ({"depths": []}, "depths must be a non-empty list"),
    ({"depths": [1], "metric": "diagonal"}, "metric"),
    ({"depths": [1], "max_steps": 0}, "max_steps"),
    ({"depths": [1], "max_moves": 0}, "max_moves"),
    ({"depths": [1], "instance_source": "somewhere"}, "instance_source"),
])
def test_bad_grid_values_fail_as_the_runner_suites_do(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(SuiteError, match=message):
        bridge.load_environment(**kwargs)


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
        text = "\n".join(f"{_role(m)}: {_plain(m)['content']}" for m in messages) + "\nassistant: "
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


def grpo_step(policy: TinyPolicy, outputs: list[Outcome], lr: float = 0.05) -> tuple[float, list[float], float]:
    """One GRPO update on one group: advantages ``(r - mean) / (std + eps)`` of the rubric's rewards weight
    the summed log-probabilities of each rollout's sampled replies; one SGD step.  Returns the loss, the
    advantages and the gradient's norm."""
    import torch

    rewards = torch.tensor([float(o.reward) for o in outputs])
    advantages = (rewards - rewards.mean()) / (rewards.std() + 1e-6)
    optimizer = torch.optim.SGD(policy.model.parameters(), lr=lr)
    optimizer.zero_grad()
    terms = []
    for out, advantage in zip(outputs, advantages):
        conversation = out.messages
        logprob = torch.zeros(())
        for i, message in enumerate(conversation):
            if _role(message) == "assistant":
                logprob = logprob + policy.action_logprobs(conversation[:i])[ACTIONS.index(_plain(message)["content"])]
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
    env = make_env(depths=[1], instances=1, eval_instances=0, reward="sticker", max_steps=2)
    policy = TinyPolicy(seed=0)
    with ScriptedServer(policy.respond) as server:
        outputs = play(env, server, rollouts=8)
    rewards = [o.reward for o in outputs]
    assert len(outputs) == 8 and len(set(rewards)) > 1, rewards  # the rollouts differ: advantages are not all 0
    assert all(o.record.n_steps >= 1 and o.record.parse_errors == 0 for o in outputs)
    flat = [Outcome(0.5, o.metrics, o.record, o.messages, o.turns, o.ended_by_episode) for o in outputs]
    _, zero, zero_norm = grpo_step(policy, flat, lr=0.0)
    assert all(a == 0.0 for a in zero) and zero_norm == 0.0
    before = [p.detach().clone() for p in policy.model.parameters()]
    loss, advantages, norm = grpo_step(policy, outputs)
    assert sum(advantages) == pytest.approx(0.0, abs=1e-5) and norm > 0 and loss == loss  # finite
    assert any(bool((p.detach() != b).any()) for p, b in zip(policy.model.parameters(), before))
