"""``cubebench/episode``: the CubeBench episode protocol (Exp 1, 2, 3) as an Inspect task.

The dataset is the runner's plan of a suite (:func:`~cubebench.runner.protocols.episodes.plan.plan_episodes`): one sample per
grid cell, keyed like a ``cubebench run`` episode (``symbolic/d1/i00/none/basic``), on the certified
instances shipped in ``cubebench.instances``.  The solver plays the sample's episode with
:func:`~cubebench.runner.protocols.episodes.play.play_episode` (the env of ``gymnasium.make(cubebench.TIERS[tier], ...)``,
the suite's move and rotation budgets, the step budget) with an agent over the eval's model
(:mod:`.agent_factory`), and keeps the episode record in the sample's store under :data:`RECORD_KEY`.
The scorer reports solved, moves, rotations and steps, with the attribution inputs as metadata.
"""

from __future__ import annotations

from typing import Any

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ModelOutput, get_model
from inspect_ai.scorer import Score, Scorer, Target, mean, scorer, stderr
from inspect_ai.solver import Generate, Solver, TaskState, solver

from cubebench.agents.records import EpisodeRecord
from cubebench.runner import check_plan_size, EpisodeSpec, plan_episodes, play_episode, PlaySettings, resolve_source, Suite, SuiteError

from .model_client import in_worker_thread
from .task_errors import raise_if_error, refuse_unknown, task_parameters
from .agent_factory import stored_record, AGENTS, InspectAgentFactory
from .params import PARAMS_SOURCE, check_flag, episode_suite

__all__ = ["episode", "episode_dataset", "play_cube_episode", "episode_outcome", "attribution_inputs", "RECORD_KEY", "TASK_OBS_FORMATS",
           "SOLVER_TOOLS"]

RECORD_KEY = "cubebench:record"
"""Where a sample's store keeps its episode record (:meth:`~cubebench.agents.records.EpisodeRecord.to_dict`)."""
TASK_OBS_FORMATS = ("image", "text")
"""How a pictured tier (:attr:`~cubebench.tiers.TierSpec.pictured`) is shown: its image (multimodal models) or its
text form."""
SOLVER_TOOLS = ("solve", "solve_current")
"""The solver tools; whether one answered is the exploration input of the attribution."""


def episode_dataset(suite: Suite) -> MemoryDataset:
    """One sample per planned episode of ``suite``, its :class:`~cubebench.runner.protocols.episodes.plan.EpisodeSpec` as metadata."""
    samples = [Sample(id=ep.key, input=_describe(ep), metadata=ep.to_dict())
               for ep in plan_episodes(suite, resolve_source(suite, warn=False))]
    return MemoryDataset(samples, name=suite.name)


def _describe(ep: EpisodeSpec) -> str:
    return (f"CubeBench episode {ep.key}: solve a cube {ep.depth} {ep.metric} turns from solved ({ep.tier} tier, "
            f"{ep.reward} reward, {ep.setting} tools, {ep.max_steps} steps).")


@solver
def play_cube_episode(agent: str = "tools", obs_format: str = "image", send_images: bool = True,
                      distance_budget_s: float | None = None) -> Solver:
    """Play the sample's episode with ``agent`` (``tools``, ``react`` or ``codeact``) over the eval's model.

    An episode that ended as an error (a model call that failed after Inspect's retries, an agent that could
    not start) is the sample's error in Inspect's terms (:mod:`.task_errors`), its record kept in the store."""
    if agent not in AGENTS:
        raise SuiteError(f"{PARAMS_SOURCE}: agent must be one of {', '.join(AGENTS)}, got {agent!r}")
    if obs_format not in TASK_OBS_FORMATS:
        raise SuiteError(f"{PARAMS_SOURCE}: obs_format must be one of {', '.join(TASK_OBS_FORMATS)}, got {obs_format!r}")
    check_flag(send_images, "send_images")
    settings = PlaySettings(obs_format=obs_format, store_images=False, distance_budget_s=distance_budget_s)

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        model = get_model()
        spec = EpisodeSpec(**state.metadata)
        factory = InspectAgentFactory(model, agent, send_images=send_images)
        record = await in_worker_thread(play_episode, spec, factory.for_runner(), settings)
        state.store.set(RECORD_KEY, record.to_dict())
        state.messages = factory.transcript(record)
        state.output = ModelOutput.from_content(model=str(model), content=_summary(record))
        state.completed = True
        raise_if_error(record, f"episode {spec.key}", factory.failed.error)
        return state

    return solve


def _summary(record: EpisodeRecord) -> str:
    return (f"{record.status}: {record.n_steps} steps, {record.n_moves} moves, {record.n_rotations} rotations; "
            f"end state {record.end_facelets}")


@scorer(metrics={"solved": [mean(), stderr()], "moves": [mean()], "rotations": [mean()], "steps": [mean()]})
def episode_outcome() -> Scorer:
    """Solved (1/0), moves, rotations and steps of the sample's episode; the metadata holds the
    attribution inputs (tier, horizon, depth, instance, reward, setting, whether a solver tool answered)."""

    async def score(state: TaskState, target: Target) -> Score:
        record = stored_record(state, RECORD_KEY, "play_cube_episode", "episode_outcome")
        return Score(value={"solved": float(record.solved), "moves": record.n_moves,
                            "rotations": record.n_rotations, "steps": record.n_steps},
                     answer=record.status, explanation=_summary(record),
                     metadata=attribution_inputs(state.metadata, record))

    return score


def attribution_inputs(spec: dict[str, Any], record: EpisodeRecord) -> dict[str, Any]:
    """What the failure attribution (:mod:`cubebench.runner.protocols.episodes.attribution`) pairs and counts, per episode:
    the grid cell, the outcome and whether a solver tool ever returned a solution."""
    answered = any(c.name in SOLVER_TOOLS and not c.error for s in record.steps for c in s.tool_calls)
    return {"key": spec["key"], "tier": spec["tier"], "horizon": spec["horizon"], "depth": spec["depth"],
            "instance": spec["instance"], "reward": spec["reward"], "setting": spec["setting"],
            "metric": spec["metric"], "solved": record.solved, "status": record.status,
            "solver_answered": answered, "errors": record.errors, "parse_errors": record.parse_errors,
            "total_reward": record.total_reward, "distance_start": record.distance_start}


@task
def episode(suite: str = "exp1", tier: Any = None, depths: Any = None, horizon: Any = None,
            instances: int | None = None, reward: Any = None, tool_setting: Any = None, metric: str | None = None,
            steps: int | None = None, max_moves: int | None = None, max_rotations: int | None = None,
            seed: int | None = None, agent: str = "tools", obs_format: str = "image", send_images: bool = True,
            **unknown: Any) -> Task:
    """CubeBench episodes: a shipped suite's grid (``exp1`` basic tools, ``exp2`` dense rewards, ``exp3`` the
    three tool settings, ``smoke``, ``full``) narrowed by ``tier``, ``depths``/``horizon`` and overridden by the
    other parameters; ``agent`` says how the model acts.  Every parameter is described in docs/ecosystem.md."""
    refuse_unknown("cubebench/episode", unknown, episode)
    with task_parameters("cubebench/episode"):
        grid = episode_suite(suite, tier=tier, depths=depths, horizon=horizon, instances=instances, reward=reward,
                             tool_setting=tool_setting, metric=metric, max_steps=steps, max_moves=max_moves,
                             max_rotations=max_rotations, seed=seed)
        check_plan_size(grid, "episode")  # a huge -T instances= is one line, before anything is planned
        play = play_cube_episode(agent, obs_format, send_images)
    return Task(dataset=episode_dataset(grid), solver=play, scorer=episode_outcome(), metadata={"suite": grid.to_dict()})
