"""``run_episode``: the one loop every agent kind is evaluated with.

It never dies half-written: a failure of the agent, its model client or the
infrastructure becomes an ``error`` in the step record (and ends the episode
as ``status="error"`` after ``max_consecutive_errors`` in a row); only
``KeyboardInterrupt`` propagates, after the ``on_step`` callback has seen
every finished step.  A malformed model reply (no parsable action, no code
block, an unknown tool, bad arguments) is the model's own failure, not an
error: it is recorded as the step's ``parse_error``, shown to the model as
the next observation and counts as a step like any other.
"""

from __future__ import annotations

import time
import traceback
from dataclasses import replace
from typing import Any, Callable, Literal, cast, get_args

import gymnasium as gym
import numpy as np

from cubebench.budgets import episode_budget
from cubebench.envs.cube_env import INTERACTION_STEPS, CubeEnv
from cubebench.solver.oracle import oracle
from cubebench.tiers import TIER_SPECS
from cubebench.wrappers.description import EnvDescription, describe_env
from cubebench.wrappers.observations import SymbolicObservation, colour_text, symbolic_colours

from .base import Agent, Observation, Task, Turn
from .records import EpisodeRecord, StepRecord, observation_digest, safe_text
from .tools import Toolbox, tools_for

DEFAULT_MAX_STEPS = INTERACTION_STEPS
"""CubeBench's budget of interaction steps per episode."""

Distances = Literal["cheap", "exact", "none"]
"""What :func:`run_episode` spends on each step's true distance (see its docstring)."""
DISTANCES: tuple[str, ...] = get_args(Distances)
DEFAULT_DISTANCE_BUDGET_S = 0.1
"""Seconds of exact optimal solver a step may spend on its distance, by default.  Past the oracle's reach most
positions take the solver longer than that, so a far step costs about this and records ``None``."""

TASK_TEXT = (
    "You are solving a 3x3 Rubik's cube{tier_note}. Faces are named U (up), D (down), L (left), "
    "R (right), F (front), B (back); moves use Singmaster notation (R = right face clockwise as seen "
    "from that face, R' counter-clockwise, R2 half turn){rotations}. A cube is solved when every face "
    "shows one colour. You have {max_steps} interaction steps; each step is one action.{budget} Tools: {tools}."
)


def describe_task(tier: str, setting: str, tools: tuple[str, ...], max_steps: int,
                  max_moves: int | None = None, max_rotations: int | None = None, metric: str = "quarter") -> str:
    """The task text shown to models (no ground truth in it)."""
    rotations = "; rotate the whole cube with x, y, z to change your view" if "rotate" in tools else ""
    return TASK_TEXT.format(
        tier_note=TIER_SPECS[tier].task_note if tier in TIER_SPECS else "", rotations=rotations, max_steps=max_steps, tools=", ".join(tools),
        budget=_budget_text(max_moves, max_rotations if "rotate" in tools else None, metric),
    )


def _budget_text(max_moves: int | None, max_rotations: int | None, metric: str) -> str:
    """The budgets as the task states them (a half turn costs two quarter turns)."""
    text = ""
    if max_moves is not None:
        unit = "quarter turns (a half turn counts two)" if metric == "quarter" else "face turns"
        text += (f" You may make at most {max_moves} {unit} in the whole episode: the move that uses the "
                 "last of them ends the episode if the cube is not solved by then, and moves past them are refused.")
    if max_rotations is not None:
        text += f" You may rotate the cube at most {max_rotations} times; a rotation past that is refused."
    return text


def budgeted_options(env: gym.Env, reset_options: dict[str, Any] | None = None) -> dict[str, Any]:
    """``reset_options`` plus the episode's budgets (:func:`~cubebench.budgets.episode_budget`).

    No episode the evaluation loop plays is unbounded: a face-turn budget
    makes blind enumeration and reward probing fail (docs/environments.md).
    The env keeps its own budget (none, or what it was made with); the reset
    options bound this one episode.
    """
    core = cast(CubeEnv, env.unwrapped)
    budget = episode_budget(depth=core.depth, metric=core.metric, view_actions=core.view_actions,
                            max_moves=core.own_budget[0], max_rotations=core.own_budget[1],
                            reset_options=reset_options)
    return {**(reset_options or {}), **budget}


def _observation_view(obs: Any, tier: str, letters: Callable[[np.ndarray], str]) -> tuple[str, np.ndarray | None]:
    """Text and image parts of an env observation, as a model would be shown them.

    Text is shown as it is, an RGB image is attached; a Symbolic tier's array
    (one-hot rows or colour indices of the held cube) is shown as its 54-letter
    text form, written by ``letters`` from the observation itself.  Anything
    else is refused: a model must never be shown nothing, nor a state array on
    a tier whose observation hides the state.
    """
    if isinstance(obs, str):
        return obs, None
    arr = np.asarray(obs)
    if arr.ndim == 3 and arr.shape[2] == 3:
        return "[the current view is attached as an image]", arr
    if tier in TIER_SPECS and not TIER_SPECS[tier].hides_state:
        try:
            return letters(symbolic_colours(arr)), None
        except ValueError:
            pass
    raise ValueError(
        f"run_episode cannot show a {tier} observation of type {type(obs).__name__}"
        f"{f' and shape {arr.shape}' if arr.ndim else ''} to an agent: expected text, an RGB image "
        "(H, W, 3) or, on the symbolic tier, the (54, 6) one-hot or (54,) colour-index array")


def _symbolic_letters(env: gym.Env) -> Callable[[np.ndarray], str]:
    """How ``env`` writes 54 colour indices as text: its own ``SymbolicObservation.text``
    (face letters ``URFDLB`` or colour letters, as the env was made), else face letters."""
    layer: Any = env
    while isinstance(layer, gym.Wrapper):
        if isinstance(layer, SymbolicObservation):
            return layer.text
        layer = layer.env
    return colour_text


def _distance(state: np.ndarray, metric: str, distances: str, budget_s: float | None) -> int | None:
    """The exact distance of ``state`` as ``distances`` allows (:func:`run_episode`), else ``None``."""
    if distances == "none":
        return None
    if distances == "cheap":
        found = oracle(metric).within_reach(state)
        if found is not None or budget_s is None or not _tables_ready(metric):
            return found
    return _solver_distance(state, metric, budget_s)


def _tables_ready(metric: str) -> bool:
    from cubebench.solver.optimal import tables_ready  # imported when first needed: the solver loads numba kernels

    return tables_ready(metric)


def _solver_distance(state: np.ndarray, metric: str, budget_s: float | None) -> int | None:
    """Exact optimal distance if the optimal solver answers within the budget, else ``None``."""
    if budget_s is None:
        return None
    try:
        from cubebench.solver.optimal import SolverTimeout, optimal_distance
    except ImportError:
        return None
    try:
        return int(optimal_distance(state, metric, time_limit=budget_s))
    except SolverTimeout:
        return None


def _with_budgets(description: EnvDescription, core: CubeEnv) -> EnvDescription:
    """``description`` with the budgets the env's last reset set (reset options bound one episode)."""
    return replace(description, max_moves=core.max_moves,
                   max_rotations=core.max_rotations if core.view_actions else None)


def run_episode(
    agent: Agent,
    env: gym.Env,
    *,
    tool_setting: str = "basic",
    seed: int | None = None,
    reset_options: dict[str, Any] | None = None,
    max_steps: int = DEFAULT_MAX_STEPS,
    description: EnvDescription | None = None,
    store_images: bool = True,
    distances: Distances = "cheap",
    distance_budget_s: float | None = DEFAULT_DISTANCE_BUDGET_S,
    max_consecutive_errors: int = 3,
    on_step: Callable[[StepRecord], None] | None = None,
    config: dict[str, Any] | None = None,
    capped: bool = True,
) -> EpisodeRecord:
    """Play one episode of ``agent`` on ``env`` and return its full record.

    The tier, observation form, reward, metric and budgets are read off the
    env's own wrapper stack (:func:`~cubebench.wrappers.description.describe_env`),
    so the tools and the record follow what the agent really faces; an env
    that cannot say its tier raises.  A caller that has described the env
    already passes that ``description`` (the runner: once per episode); it is
    used as it is, so it must be this env's.
    An env without a move budget plays the episode under its depth's (:func:`budgeted_options`: reset
    options, so the env given is left as it was); ``capped=False`` plays it under no move or rotation budget at
    all, only ``max_steps`` (the CubeBench paper's rules: the runner's ``paper`` rules).

    Each step's record carries the true distance to solved where ``distances`` lets it be had (a solved cube's
    is 0 in every mode; ``None``: not computed, or the solver ran out of time):

    - ``"cheap"`` (default): the table-free oracle (:meth:`~cubebench.solver.oracle.DistanceOracle.within_reach`:
      up to 10 quarter or 9 face turns from solved, milliseconds a step after a few seconds to build it once
      per process and metric); farther out the exact optimal solver, within ``distance_budget_s`` a step, only
      where its tables are already loaded or built on disk (loading them takes seconds, once a process).  A call
      never builds the solver's tables.
    - ``"exact"``: the exact optimal solver within ``distance_budget_s`` a step, at any distance.  Its first use
      builds its tables where they are missing: about 0.8 GB on disk, 2 to 15 minutes on 2 cores, once
      (``python -m cubebench.solver.optimal build`` builds them ahead).  What the runner records
      (``--distance-budget``).
    - ``"none"``: nothing is computed.

    ``distance_budget_s`` bounds the optimal solver's time at each step's end (``None``: the solver is never
    asked, so ``"cheap"`` stops at the oracle's reach; ``"exact"`` needs a budget).
    """
    if distances not in DISTANCES:
        raise ValueError(f"run_episode(distances={distances!r}): expected one of {', '.join(DISTANCES)}")
    if distances == "exact" and distance_budget_s is None:
        raise ValueError("run_episode(distances='exact') needs distance_budget_s (seconds of optimal solver a step)")
    described = description if description is not None else describe_env(env)
    tier = described.tier
    letters = _symbolic_letters(env)
    options = budgeted_options(env, reset_options) if capped else \
        {**(reset_options or {}), "max_moves": None, "max_rotations": None}
    obs, info = env.reset(seed=seed, options=options)
    core = cast(CubeEnv, env.unwrapped)  # the CubeBench env under the wrappers
    described = _with_budgets(described, core)  # the budgets this episode plays under
    _observation_view(obs, tier, letters)  # an observation no model can be shown fails here, before any step
    toolbox = Toolbox(env, tier, tool_setting, obs, info)
    task = Task(
        tier=tier, tool_setting=tool_setting, tools=toolbox.names, action_names=tuple(core.action_names),
        obs_format=described.obs_format, reward=described.reward, metric=described.metric, max_steps=max_steps,
        description=describe_task(tier, tool_setting, toolbox.names, max_steps, described.max_moves,
                                  described.max_rotations, described.metric),
        max_moves=described.max_moves, max_rotations=described.max_rotations,
    )
    record = EpisodeRecord(
        agent=getattr(agent, "name", type(agent).__name__),
        config={"tier": tier, "tool_setting": tool_setting, "seed": seed, "reset_options": reset_options,
                "max_steps": max_steps, "env": described.as_dict(), **(config or {})},
        start_facelets=core.facelets,
        distance_start=info.get("distance"),
    )
    started = time.perf_counter()
    try:
        agent.reset(task)
    except KeyboardInterrupt:
        raise
    except Exception as err:  # e.g. an agent that cannot play this tier: an error record, not a crash
        record.status, record.errors = "error", 1
        record.config["reset_error"] = traceback.format_exception_only(type(err), err)[-1].strip()
        return _finish(record, toolbox, started, errored=True)
    feedback, last_reward, errors_in_row, failed = "Initial observation.", None, 0, False
    for step in range(max_steps):
        toolbox.show()
        text, image = _observation_view(toolbox.obs, tier, letters)
        # tool results and code output may carry lone surrogates: the model is shown them escaped, as stored
        observation = Observation(step=step, steps_left=max_steps - step, text=safe_text(f"{feedback}\n{text}".strip()),
                                  image=image, raw=toolbox.obs, reward=last_reward)
        turn, latency = _act(agent, observation, toolbox)
        calls = toolbox.take_calls()
        errors_in_row = errors_in_row + 1 if turn.error else 0  # a parse_error is the model's failure: not counted
        step_reward = sum(c.reward for c in calls)
        digest, png = observation_digest(observation.text, image, store_images)
        rec = StepRecord(
            index=step, observation_text=observation.text, observation_sha256=digest, observation_png_b64=png,
            reply=turn.reply, action=turn.action, tool_calls=calls, moves=sum(len(c.actions) for c in calls),
            reward=step_reward, input_tokens=turn.input_tokens, output_tokens=turn.output_tokens,
            cost_usd=turn.cost_usd, latency_s=latency, error=turn.error, model_log=turn.model_log,
            distance=0 if toolbox.terminated else _distance(core.state, core.metric, distances, distance_budget_s),
            parse_error=turn.parse_error, reply_cut=turn.reply_cut,
        )
        record.steps.append(rec)
        if on_step is not None:
            on_step(rec)
        feedback = _feedback(calls, turn)
        last_reward = step_reward if "reward_kind" in toolbox.info else None
        failed = turn.stop or errors_in_row >= max_consecutive_errors
        if toolbox.over or failed:
            break
    return _finish(record, toolbox, started, failed)


def _act(agent: Agent, observation: Observation, toolbox: Toolbox) -> tuple[Turn, float]:
    t0 = time.perf_counter()
    try:
        turn = agent.act(observation, toolbox)
        if not isinstance(turn, Turn):
            turn = Turn(error=f"agent returned {type(turn).__name__}, not a Turn")
    except KeyboardInterrupt:
        raise
    except Exception as err:  # an agent or model failure is data, not a crash
        tb = traceback.format_exception_only(type(err), err)[-1].strip()
        turn = Turn(error=f"agent failure: {tb}")
    return turn, time.perf_counter() - t0


def _feedback(calls: list, turn: Turn) -> str:
    lines = [turn.feedback] if turn.feedback is not None else [c.result for c in calls if c.result]
    for problem in (turn.parse_error, turn.error):
        if problem and f"Error: {problem}" not in lines:  # a refused tool call already shows its error
            lines.append(f"Error: {problem}")
    if not calls and not turn.error and not turn.parse_error:
        lines.append("No tool was called in that step.")
    return "\n".join(lines)


def _finish(record: EpisodeRecord, toolbox: Toolbox, started: float, errored: bool) -> EpisodeRecord:
    core = toolbox.core
    record.solved = bool(core.is_solved)
    record.status = "solved" if record.solved else ("error" if errored else "failed")
    record.n_steps = len(record.steps)
    record.n_moves, record.n_rotations = toolbox.moves, toolbox.rotations
    record.total_reward = toolbox.total_reward
    record.input_tokens = sum(s.input_tokens for s in record.steps)
    record.output_tokens = sum(s.output_tokens for s in record.steps)
    record.cost_usd = sum(s.cost_usd for s in record.steps)
    record.errors = sum(1 for s in record.steps if s.error)
    record.parse_errors = sum(1 for s in record.steps if s.parse_error)
    record.end_facelets = core.facelets
    record.distance_end = record.steps[-1].distance if record.steps else record.distance_start
    record.wall_s = time.perf_counter() - started
    return record


__all__ = ["run_episode", "describe_task", "budgeted_options", "tools_for", "DEFAULT_MAX_STEPS", "DISTANCES",
           "DEFAULT_DISTANCE_BUDGET_S"]
