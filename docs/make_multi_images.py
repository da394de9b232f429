"""Regenerate the pictures of docs/multi-agent.md: each multi-agent env's seats, as ``render()`` draws them.

Run from the repository root: ``python docs/make_multi_images.py`` (needs the ``multi`` extra).
Every picture is the env's own ``rgb_array`` render, mid-episode of its perfect scripted team
(``cubebench.agents.teams``) on shipped certified instance 0 of depth 8, so the panels show what
each seat sees and the last message it heard.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PIL import Image

from cubebench.agents.teams import perfect_team
from cubebench.envs.multi import make_multi_env

OUT = Path(__file__).resolve().parent / "img"
PICTURES = [
    ("multi_observer_actor_face.png", "CubeBench-ObserverActor-v0", {"tier": "face"}, 10),
    ("multi_observer_actor_symbolic.png", "CubeBench-ObserverActor-v0", {"tier": "symbolic", "form": "text"}, 2),
    ("multi_two_cameras.png", "CubeBench-TwoCameras-v0", {}, 4),
    ("multi_scrambler_solver_scramble.png", "CubeBench-ScramblerSolver-v0", {"tier": "vertex"}, 10),
    ("multi_scrambler_solver_solve.png", "CubeBench-ScramblerSolver-v0", {"tier": "vertex"}, 24),
]
"""(file, env name, kwargs, AEC turns to play before the picture)."""


def picture(name: str, kwargs: dict[str, Any], turns: int) -> Any:
    """The env's render after its perfect team has played ``turns`` AEC turns."""
    env = make_multi_env(name, render_mode="rgb_array", image_size=192, **kwargs)
    team = perfect_team(env)
    options = None if "Scrambler" in name else {"instance": 0}
    env.reset(seed=0, options=options)
    for seat in team.values():
        seat.reset()
    for _, agent in zip(range(turns), env.agent_iter()):
        observation, _, terminated, truncated, info = env.last()
        env.step(None if terminated or truncated else team[agent].act(observation, info))
    return env.render()


def main() -> None:
    for file, name, kwargs, turns in PICTURES:
        Image.fromarray(picture(name, kwargs, turns)).save(OUT / file, optimize=True)
        print(f"wrote docs/img/{file}")


if __name__ == "__main__":
    main()
