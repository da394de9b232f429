"""Supervised traces: the ReAct agent's own conversation, with the certified optimal solution as its replies.

A trace is made by *playing* the episode, not by writing a transcript beside it: the ReAct agent
(:class:`~cubebench.agents.react.ReActAgent`, its shipped prompt and few-shot examples) plays the
runner's env of the episode (:func:`~.protocols.episodes.play.make_env`) through :func:`~cubebench.agents.episode.run_episode`,
and its model is a client that replies, step by step, with a ``Thought:``/``Action:`` pair taken
from the optimal solution.  The agent's message history is then exactly what a model would be
shown and would have to answer: system prompt, each ``Observation:`` (text, or text and image),
each reply.

The replies follow the privileged solver baseline (:class:`~cubebench.agents.scripted.SolverAgent`):
on a partial tier first rotate until every face has been in view (the tier's :attr:`~cubebench.tiers.TierSpec.looks`),
then play the optimal solution, one move per step while the steps allow it (more per step where the
step budget is short: a face-view trace of depth 16 needs 5 looks and 16 moves in 20 steps).  The
optimal solution is the instance's recorded scramble inverted, kept only when it solves the state in
exactly the certified number of moves; otherwise the exact solver finds one.  Face turns act on the
held cube, so after the looks each move is renamed to the held face that now carries the centre of
the face it turns (what ``CubeEnv``'s ``move_frame="global"`` does for one action).

:func:`replay_trace` checks a trace independently of how it was made: it parses every reply with the
ReAct parser and plays it with the agents' tools on a fresh env; the trace must end the episode solved.
"""

from __future__ import annotations

import math
from typing import Any, Mapping, Sequence

from cubebench.agents.actions import ActionParseError, parse_action
from cubebench.agents.episode import budgeted_options, run_episode
from cubebench.agents.llm import ModelClient
from cubebench.agents.llm.client import CallResult
from cubebench.agents.llm.messages import Message
from cubebench.agents.react import ReActAgent
from cubebench.agents.records import EpisodeRecord
from cubebench.agents.tools import Toolbox, ToolError
from cubebench.curriculum import Instance
from cubebench.engine import TABLE
from cubebench.engine.facelets import CENTRES, FACES
from cubebench.engine.kernels import apply_moves, is_solved
from cubebench.engine.metric import check_metric, metric_length
from cubebench.engine.notation import invert_sequence, parse_array
from cubebench.engine.state import from_facelets
from cubebench.tiers import tier_spec

from .execute import PlaySettings
from .protocols.episodes.plan import EpisodeSpec
from .protocols.episodes.play import make_env

TRACE_MODEL = "cubebench-optimal-trace"
"""The model name the traces' scripted client reports."""


class TraceError(RuntimeError):
    """A trace did not solve its episode (a bug: certified solutions always do)."""


class ScriptedReplies(ModelClient):
    """A model client that answers each call with the next of a fixed list of replies (no network)."""

    provider = "scripted"

    def __init__(self, replies: Sequence[str]) -> None:
        super().__init__(TRACE_MODEL, price=(0.0, 0.0))
        self.replies = list(replies)

    def build_request(self, messages: Sequence[Message], *, stop: list[str] | None, max_tokens: int,
                       temperature: float | None, seed: int | None, extra: dict[str, Any]) -> dict[str, Any]:
        return {"messages": list(messages)}

    def loggable(self, request: dict[str, Any]) -> dict[str, Any]:
        return {"model": self.model, "messages": len(request["messages"])}

    def endpoint(self) -> str:
        return "scripted:optimal-trace"

    def attempt(self, request: dict[str, Any]) -> CallResult:
        if not self.replies:
            raise TraceError("the trace ran out of replies before the episode ended")
        text = self.replies.pop(0)
        return CallResult(text=text, finish_reason="stop", input_tokens=0, output_tokens=0, status=200, body={})


def optimal_solution(instance: Instance) -> str:
    """An optimal solution of a certified instance: its scramble inverted when that solves the state in
    exactly the certified distance (every shipped instance), else the exact optimal solver's."""
    state = from_facelets(instance.state)
    solution = invert_sequence(instance.scramble)
    metric = check_metric(instance.metric)
    if metric_length(solution, metric) == instance.distance and is_solved(apply_moves(state, TABLE, parse_array(solution))):
        return solution
    from cubebench.solver.optimal import solve_optimal  # the exact solver's tables: only when needed

    return " ".join(solve_optimal(state, metric).moves)


def held_frame(state: str, looks: Sequence[str], solution: str) -> str:
    """``solution`` (face turns of the cube as it starts) renamed for the cube held after the rotations ``looks``."""
    held = apply_moves(from_facelets(state), TABLE, parse_array(" ".join(looks))) if looks else from_facelets(state)
    face_now = {FACES[int(held[CENTRES[h]]) // 9]: FACES[h] for h in range(6)}
    return " ".join(face_now[m[0]] + m[1:] for m in solution.split())


def trace_replies(tier: str, state: str, solution: str, metric: str, max_steps: int) -> list[str]:
    """The ReAct replies of an optimal trace: looks first (partial tiers), then the solution's moves."""
    looks = list(tier_spec(tier).looks)
    moves = held_frame(state, looks, solution).split()
    room = max_steps - len(looks)
    if room < 1:
        raise TraceError(f"{max_steps} steps leave no room to play a solution after {len(looks)} looks")
    replies = [f"Thought: Not every face has been in view yet; I rotate the cube to look at the hidden ones.\n"
               f'Action: rotate("{look}")' for look in looks]
    per_step = max(1, math.ceil(len(moves) / room))
    unit = "quarter turns" if metric == "quarter" else "face turns"
    for start in range(0, len(moves), per_step):
        rest, chunk = " ".join(moves[start:]), " ".join(moves[start:start + per_step])
        replies.append(f"Thought: The cube is {metric_length(rest, check_metric(metric))} {unit} from solved; "
                       f"an optimal solution is {rest}. I play {chunk}.\nAction: move(\"{chunk}\")")
    return replies


def play_trace(spec: EpisodeSpec, settings: PlaySettings, replies: Sequence[str]) -> tuple[list[dict[str, Any]], EpisodeRecord]:
    """Play ``spec``'s episode with the ReAct agent answering ``replies``: its messages and the episode record."""
    env = make_env(spec, settings)
    agent = ReActAgent(ScriptedReplies(replies), name="react:" + TRACE_MODEL)
    try:
        record = run_episode(agent, env, tool_setting=spec.setting, seed=spec.env_seed,
                             reset_options=spec.reset_options, max_steps=spec.max_steps, store_images=False,
                             distances="none")
    finally:
        env.close()
    if record.status != "solved":
        raise TraceError(f"{spec.key}: the optimal trace ended {record.status}: "
                         f"{[s.parse_error or s.error for s in record.steps if s.parse_error or s.error]}")
    return agent.messages, record


def replay_trace(spec: EpisodeSpec, settings: PlaySettings, messages: Sequence[Mapping]) -> str:
    """Replay a trace's assistant replies through the ReAct parser and the tools on a fresh env of ``spec``.

    Returns ``""`` when the last reply solves the cube, else what went wrong (a reply that does not parse,
    a refused tool call, a reply after the episode ended, an unsolved cube)."""
    env = make_env(spec, settings)
    try:
        obs, info = env.reset(seed=spec.env_seed, options=budgeted_options(env, spec.reset_options))
        tools = Toolbox(env, spec.tier, spec.setting, obs, info)
        replies = [m["content"] for m in messages if m["role"] == "assistant"]
        for k, reply in enumerate(replies):
            if tools.over:
                return f"reply {k} comes after the episode ended"
            tools.show()  # each reply answers an observation
            try:
                tools.invoke(*parse_action(reply if isinstance(reply, str) else _text_of(reply)))
            except (ActionParseError, ToolError) as err:
                return f"reply {k}: {err}"
        return "" if tools.terminated else "the replies end with the cube unsolved"
    finally:
        env.close()


def _text_of(parts: Sequence[Mapping]) -> str:
    """The text of a message given as content parts."""
    return "".join(str(p.get("text") or "") for p in parts if p.get("type") == "text")
