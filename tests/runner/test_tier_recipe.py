"""The tier recipe holds: one :class:`~cubebench.tiers.TierSpec` added to the registry is a tier every layer plays.

A synthetic fifth tier, a face view of the back face (``back``), is registered for one test and taken through
``make_cube_env`` -> ``describe_env`` -> ``run_episode`` with the scripted solver -> a multi-agent seat's view ->
a one-cell suite run and its report.  Nothing but the spec names it: a layer that compared tier names (or kept a
table of the four tiers made at import) would refuse it or play it as another tier.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Iterator

import gymnasium as gym
import numpy as np
import pytest

from helpers import needs

from cubebench.agents.episode import run_episode
from cubebench.agents.scripted import SCRIPTED_AGENTS
from cubebench.agents.teams import read_view
from cubebench.engine.facelets import face_slice
from cubebench.registration import ENTRY_POINT
from cubebench.render.face import face_canvas, render_face
from cubebench.render.text import face_text_grid
from cubebench.runner.cli import main
from cubebench.runner.store import open_run
from cubebench.tiers import DEFAULT_TIER, TIER_SPECS, TIERS, TierSpec, tier_names, tier_title
from cubebench.wrappers.tier_envs import make_cube_env
from cubebench.wrappers.description import describe_env
from cubebench.wrappers.observations import symbolic_colours

BACK = face_slice("B")
SPEC = TierSpec(
    name="back", title="Back", env_id="CubeBench-Back-v0", forms=("image", "text"), visible_faces="B",
    image=lambda col, size: render_face(col[BACK], size), text=lambda col: face_text_grid(col[BACK]),
    canvas=face_canvas, task_note=" of which you see only the back face", seat_note="one face (the back)",
    looks=("y", "y", "y", "x", "x2"))


@pytest.fixture
def back_tier(monkeypatch: pytest.MonkeyPatch) -> Iterator[TierSpec]:
    """The fifth tier in the registry (and its id in Gymnasium's) for one test."""
    monkeypatch.setitem(TIER_SPECS, SPEC.name, SPEC)
    monkeypatch.setitem(TIERS, SPEC.name, SPEC.env_id)
    gym.register(id=SPEC.env_id, entry_point=ENTRY_POINT, kwargs={"tier": SPEC.name}, disable_env_checker=True)
    try:
        yield SPEC
    finally:
        del gym.registry[SPEC.env_id]


def test_a_fifth_tier_is_one_spec_from_the_env_to_the_report(back_tier: TierSpec, tmp_path: Path) -> None:
    env = make_cube_env("back", depth=2, obs_format="text")
    description = describe_env(env)
    assert (description.tier, description.obs_format, description.view_actions) == ("back", "text", True)
    obs, info = env.reset(seed=3)
    state = symbolic_colours(env.unwrapped.facelets)  # no rotation yet: the held colours as they are
    assert obs == face_text_grid(state[BACK]) and "facelets" not in info  # the back face, the state hidden

    record = run_episode(SCRIPTED_AGENTS["solver"](seed=0), gym.make("CubeBench-Back-v0", depth=2, obs_format="text"),
                         seed=3, tool_setting="basic")
    assert record.config["tier"] == "back" and record.status == "solved"
    assert record.n_rotations >= len(back_tier.looks)  # the solver looked round before it solved

    suite = tmp_path / "back.json"
    suite.write_text(json.dumps({"name": "back", "tiers": ["back"], "depths": [1], "instances": 1,
                                 "rewards": ["none"], "tool_settings": ["basic"]}))
    db = tmp_path / "back.sqlite"
    assert main(["run", "--distance-budget", "0", "--suite", str(suite), "--agent", "solver", "--obs-format", "text",
                 "--out", str(db), "--no-progress", "--quiet"]) == 0
    with open_run(db) as store:
        rows = store.rows()
    assert [(r.tier, r.solved) for r in rows] == [("back", True)]
    assert main(["report", str(db)]) == 0


@needs("pettingzoo")
def test_a_fifth_tier_is_a_seat_view_too(back_tier: TierSpec) -> None:
    """A multi-agent seat given the tier sees the back face and reads it back (the games need the multi extra)."""
    from cubebench.envs.multi.views import SeatView

    env = make_cube_env("back", depth=2, obs_format="text")
    env.reset(seed=3)
    state = symbolic_colours(env.unwrapped.facelets)
    view = SeatView(tier="back", form="text")
    positions, colours = read_view(view, view.observe(state))
    assert list(positions) == list(range(54))[BACK] and np.array_equal(colours, state[BACK])


def test_the_texts_that_list_tiers_name_a_fifth_one(back_tier: TierSpec, capsys: pytest.CaptureFixture[str]) -> None:
    """The report's budget line and the --help texts list the tiers from the registry (cubebench.tiers.tier_names)."""
    from cubebench.runner.protocols.episodes.protocol import budget_text

    assert tier_names("pictured") == "visual, face, vertex and back"
    assert tier_names("partial", titled=True) == "Face, Vertex and Back" and tier_title("back") == "Back"
    assert budget_text({"max_moves": 30, "max_rotations": 40, "metric": "quarter"}).endswith(
        "40 view rotations on Face, Vertex and Back")
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    assert "what the visual, face, vertex and back tiers show" in " ".join(capsys.readouterr().out.split())


def test_the_tier_helpers_read_the_registry() -> None:
    assert DEFAULT_TIER in TIER_SPECS and tier_title("gone") == "gone"  # a stored run's unknown tier reports as is
    assert tier_names() == ", ".join(list(TIER_SPECS)[:-1]) + " and " + list(TIER_SPECS)[-1]
    with pytest.raises(ValueError, match="TierSpec has no field 'colourful'"):
        tier_names("colourful")
