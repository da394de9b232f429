"""The runner plays an episode as it records it: the env described once and handed to ``run_episode``, and the
step distances the exact solver's within ``--distance-budget`` (none when it is off), never ``run_episode``'s
cheap default, so stored runs and their reports mean what they always meant."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from cubebench.agents import episode
from cubebench.runner.execute import PlaySettings
from cubebench.runner.protocols.episodes import play
from cubebench.runner.protocols.episodes.plan import plan_episodes
from cubebench.runner.protocols.episodes.suite import suite_from_dict
from cubebench.runner.specs import AgentFactory, AgentSpec

SUITE = suite_from_dict({"name": "d3", "tiers": ["face"], "depths": [3], "instances": 1, "rewards": ["none"],
                         "tool_settings": ["basic"]}, source="test")


@pytest.fixture
def described(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The tiers the runner's play described (run_episode must not describe the env again)."""
    seen: list[str] = []
    real = play.describe_env

    def counted(env: Any) -> Any:
        seen.append(real(env).tier)
        return real(env)

    monkeypatch.setattr(play, "describe_env", counted)
    monkeypatch.setattr(episode, "describe_env", lambda env: pytest.fail("run_episode described the env again"))
    return seen


@pytest.mark.parametrize("budget", [0.5, None])
def test_the_runner_describes_once_and_records_exact_distances_or_none(
        budget: float | None, described: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    import cubebench.solver.optimal as solver

    asked: list[float | None] = []

    def exact(state: np.ndarray, metric: str, *, time_limit: float | None = None) -> int:
        asked.append(time_limit)
        return 17

    monkeypatch.setattr(solver, "optimal_distance", exact)  # the exact solver, as if its tables were built
    monkeypatch.setattr(episode, "oracle", lambda metric: pytest.fail("the cheap oracle was asked"))
    spec = plan_episodes(SUITE, "scramble")[0]
    record = play.play_episode(spec, AgentFactory(AgentSpec("random")),
                               PlaySettings(obs_format="text", store_images=False, distance_budget_s=budget))
    assert described == ["face"] and record.config["tier"] == "face" and record.config["obs_format"] == "text"
    unsolved = [s.distance for s in record.steps if s.distance != 0]
    assert unsolved and set(unsolved) == ({17} if budget else {None})
    assert set(asked) == ({budget} if budget else set())
