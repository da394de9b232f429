"""The core cube environment: the engine behind Gymnasium's ``Env`` API.

The observation is the full sticker-colour array of the held cube (Tier 1's
raw form); the observation wrappers in ``wrappers/`` turn it into the tiers.
"""

from __future__ import annotations

import operator
from typing import Any, SupportsFloat

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from ..engine import kernels
from ..engine.errors import InvalidStateError
from ..engine.facelets import CENTRES, SOLVED
from ..engine.moves import FACE_ACTIONS, MOVE_INDEX, QUARTER_ACTIONS, TABLE, VIEW_ACTIONS
from ..engine.notation import parse_array
from ..engine.scramble import normalise_metric
from ..engine.state import from_facelets, to_facelets, validate_state
from ..generators import CertifiedGenerator, Generator, Instance
from ..render.ansi import net_text
from ..render.net import render_net
from ..render.window import Window, display_available

_RESET_KEYS = ("state", "scramble", "depth", "instance")


class CubeEnv(gym.Env[np.ndarray, np.int64]):
    """A Rubik's cube to solve, one action per face turn or view rotation.

    Actions are, in order, the move set's face turns (``moves="quarter"``:
    ``U U' D D' L L' R R' F F' B B'``; ``moves="face"``: the same faces with
    ``'`` and ``2``, 18 in all; see ``action_names``) followed, when
    ``view_actions`` is on, by the rotations ``x x' y y' z z'``.  Face turns act
    on the held cube (after ``y``, ``R`` turns the face now on the right)
    unless ``move_frame="global"``, which keeps them on the original faces.
    Rotations never count as moves and never change whether the cube is solved.

    Reward is sparse: 1.0 on the step that solves the cube.  The episode
    terminates when solved and truncates after ``max_steps`` actions (``None``
    for no limit).
    """

    metadata = {"render_modes": ["ansi", "rgb_array"] + (["human"] if display_available() else []), "render_fps": 4}

    def __init__(
        self,
        depth: int = 1,
        moves: str = "quarter",
        view_actions: bool = False,
        move_frame: str = "held",
        max_steps: int | None = 20,
        render_mode: str | None = None,
        generator: Generator | None = None,
    ) -> None:
        self.metric = normalise_metric(moves)
        if move_frame not in ("held", "global"):
            raise ValueError(f"move_frame must be 'held' or 'global', got {move_frame!r}")
        if render_mode == "human" and not display_available():
            raise ValueError("render_mode='human' needs a display (DISPLAY is not set); use 'rgb_array' or 'ansi'")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']}, got {render_mode!r}")
        self._window: Window | None = None
        self.depth = int(depth)
        self.move_frame = move_frame
        self.max_steps = max_steps
        self.render_mode = render_mode
        self.generator = generator or CertifiedGenerator()
        turns = QUARTER_ACTIONS if self.metric == "quarter" else FACE_ACTIONS
        self.n_turns = len(turns)
        self.view_actions = bool(view_actions)
        self.action_names: tuple[str, ...] = turns + (VIEW_ACTIONS if view_actions else ())
        self._action_moves = [MOVE_INDEX[a] for a in self.action_names]
        self.action_space = spaces.Discrete(len(self.action_names))
        self.observation_space = spaces.Box(0, 5, shape=(54,), dtype=np.uint8)
        self.state = SOLVED.copy()
        self._solved = True
        self.instance: Instance | None = None
        self.steps = 0
        self.moves = 0

    # --- Gymnasium API -------------------------------------------------
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=seed)
        self.instance = self._instance_from(options or {})
        self.state = self.instance.state.copy()
        self._solved = bool(kernels.is_solved(self.state))
        self.steps = 0
        self.moves = 0
        return self._obs(), self._info()

    def step(self, action: int) -> tuple[np.ndarray, SupportsFloat, bool, bool, dict[str, Any]]:
        if self.instance is None:
            raise RuntimeError("call reset() before step()")
        a = self._check_action(action)
        was_solved = self._solved
        self.state, obs, solved = kernels.step_state(self.state, TABLE, self._resolve(a))
        self._solved = solved = bool(solved)
        self.steps += 1
        self.moves += a < self.n_turns
        reward = 1.0 if solved and not was_solved else 0.0
        truncated = bool(self.max_steps is not None and self.steps >= self.max_steps and not solved)
        return obs, reward, solved, truncated, self._info()

    def render(self) -> str | np.ndarray | None:
        if self.render_mode == "ansi":
            return net_text(self.state // 9)
        if self.render_mode == "rgb_array":
            return render_net(self.state // 9)
        if self.render_mode == "human":
            self._window = self._window or Window()
            self._window.show(render_net(self.state // 9))
        return None

    def close(self) -> None:
        if self._window is not None:
            self._window.close()
            self._window = None
        super().close()

    # --- helpers ---------------------------------------------------------
    @property
    def is_solved(self) -> bool:
        return bool(kernels.is_solved(self.state))

    @property
    def facelets(self) -> str:
        """Ground-truth 54-character string of the held cube (runners and tests only)."""
        return to_facelets(self.state)

    def _check_action(self, action: Any) -> int:
        """The action as an int; rejects non-integers and out-of-range values."""
        try:
            a = operator.index(action)
        except TypeError:
            raise ValueError(f"action {action!r} is not an integer in Discrete({self.action_space.n})") from None
        if not 0 <= a < self.action_space.n:
            raise ValueError(f"action {action!r} is not in Discrete({self.action_space.n})")
        return a

    def _resolve(self, action: int) -> int:
        """Engine move index of an action, mapping global-frame face turns to held faces."""
        move = self._action_moves[action]
        if self.move_frame == "global" and action < self.n_turns:
            name = self.action_names[action]
            home = "URFDLB".index(name[0])
            held_face = "URFDLB"[int(np.flatnonzero(self.state[list(CENTRES)] // 9 == home)[0])]
            move = MOVE_INDEX[held_face + name[1:]]
        return move

    def _instance_from(self, options: dict[str, Any]) -> Instance:
        unknown = set(options) - set(_RESET_KEYS)
        if unknown:
            raise ValueError(f"unknown reset option(s) {sorted(unknown)}; expected one of {_RESET_KEYS}")
        given = [k for k in ("state", "scramble", "depth", "instance") if k in options]
        if len(given) > 1:
            raise ValueError(f"reset options {given} conflict: give only one of them")
        if "state" in options:
            raw = options["state"]
            state = from_facelets(raw) if isinstance(raw, str) else validate_state(raw)
            return Instance(state=state, scramble="", depth=-1, metric=self.metric)
        if "scramble" in options:
            moves = parse_array(options["scramble"])
            state = kernels.apply_moves(SOLVED, TABLE, moves)
            return Instance(state=state, scramble=str(options["scramble"]), depth=-1, metric=self.metric)
        if "instance" in options:
            return self._shipped_instance(options["instance"])
        depth = int(options.get("depth", self.depth))
        if depth < 0:
            raise ValueError(f"depth must be >= 0, got {depth}")
        return self.generator(depth, self.metric, self.np_random)

    def _shipped_instance(self, index: int) -> Instance:
        lookup = getattr(self.generator, "instance", None)
        if lookup is None:
            raise ValueError("reset(options={'instance': k}) needs a generator with shipped instance sets")
        return lookup(self.depth, self.metric, int(index))

    def _obs(self) -> np.ndarray:
        return self.state // 9

    def _info(self) -> dict[str, Any]:
        inst = self.instance
        return {
            "facelets": to_facelets(self.state),
            "scramble": inst.scramble if inst else "",
            "depth": inst.depth if inst else -1,
            "distance": inst.distance if inst else None,
            "steps": self.steps,
            "moves": self.moves,
            "is_success": self._solved,
        }


__all__ = ["CubeEnv", "InvalidStateError"]
