"""The core cube environment: the engine behind Gymnasium's ``Env`` API.

The observation is the full sticker-colour array of the held cube (Tier 1's
raw form), as 54 colour indices or one-hot rows; the observation wrappers in
``wrappers/`` turn it into the tiers.
"""

from __future__ import annotations

import functools
import operator
from typing import TYPE_CHECKING, Any, Callable, SupportsFloat

import gymnasium as gym
import numba as nb
import numpy as np
from gymnasium import spaces

from ..engine import kernels
from ..engine.errors import InvalidStateError
from ..engine.facelets import CENTRES, FACES, N_STICKERS, SOLVED
from ..engine.metric import Metric, metric_argument, turn_actions
from ..engine.moves import MOVE_INDEX, TABLE, VIEW_ACTIONS
from ..engine.notation import parse_array
from ..engine.state import from_facelets, validate_state
from ..generators import CertifiedGenerator, Generator, Instance, NoInstanceSetError
from ..render.ansi import net_text
from ..render.net import render_net
from ..render.window import Window, display_available

if TYPE_CHECKING:
    from numba.core.dispatcher import Dispatcher

_RESET_KEYS = ("state", "scramble", "depth", "instance", "max_moves", "max_rotations")
CORE_OBS_FORMATS = ("indices", "onehot")
INTERACTION_STEPS = 20
"""The CubeBench paper's interaction budget: 20 steps, each one action (the env's step limit, an episode's steps, a
suite's ``max_steps``, ``cubebench play --steps``: every default of it reads this one)."""

# Layout of an env's work buffer: the held state, then what the step kernel
# derives from it (colour indices, facelet letters, one-hot rows), so a step's
# array work is one Numba call; a single-state step is dominated by per-call
# overhead, not by the arithmetic.
_COLOURS = N_STICKERS
_LETTERS = 2 * N_STICKERS
_ONEHOT = 3 * N_STICKERS
_WORK_SIZE = _ONEHOT + 6 * N_STICKERS
_NO_MOVE = -1
_UNPICKLED = ("_held", "_letters", "_obs_view", "_kernel")


def _make_step_kernel(
    table: np.ndarray, face_codes: np.ndarray
) -> Dispatcher[Callable[[np.ndarray, int], bool]]:
    """The step kernel, with the move table and face letters baked in as constants.

    A closure over them, not module globals: Numba's cache hashes a closure's
    contents but not globals from other modules, so an edited table recompiles
    instead of loading stale code.
    """

    @nb.njit(cache=True)
    def step_kernel(work, move):
        """Apply engine move ``move`` (none if negative) to the state in ``work``,
        rewrite the derived views from it, and return whether it is solved.

        Allocation-free and holding the GIL: at ~50 ns of work, a heap copy or
        a GIL release would be a measurable share of the call.
        """
        if move >= 0:
            row = table[move]
            for i in range(N_STICKERS):
                work[_COLOURS + i] = work[i]  # the colours are scratch until rewritten below
            for i in range(N_STICKERS):
                work[i] = work[_COLOURS + row[i]]
        work[_ONEHOT:] = 0
        for i in range(N_STICKERS):
            c = work[i] // 9
            work[_COLOURS + i] = c
            work[_LETTERS + i] = face_codes[c]
            work[_ONEHOT + 6 * i + c] = 1
        return kernels.is_solved(work[:N_STICKERS])

    return step_kernel


_step_kernel = _make_step_kernel(TABLE, np.frombuffer(FACES.encode("ascii"), dtype=np.uint8))


@functools.cache
def _compiled_step_kernel() -> Callable[[np.ndarray, int], bool]:
    """:func:`_step_kernel`'s compiled code for a work buffer and an int, called
    without Numba's per-call type dispatch (~100 ns, a tenth of an env step);
    the dispatcher itself if this Numba version lacks the internals used.

    Safe only because every call passes the env's own uint8 work buffer and an int.
    """
    work = np.zeros(_WORK_SIZE, dtype=np.uint8)
    _step_kernel(work, _NO_MOVE)  # compile, or load from the cache
    try:
        compiled = _step_kernel.overloads[(nb.typeof(work), nb.typeof(_NO_MOVE))]
        # numba's CompileResult is a namedtuple built from a runtime field list, so mypy sees no fields
        return compiled.entry_point  # type: ignore[attr-defined]
    except (AttributeError, KeyError):
        return _step_kernel


class CubeEnv(gym.Env[np.ndarray, np.int64]):
    """A Rubik's cube to solve, one action per face turn or view rotation.

    Actions are, in order, the metric's face turns (``metric="quarter"``:
    ``U U' D D' L L' R R' F F' B B'``; ``metric="half"``: the same faces with
    ``'`` and ``2``, 18 in all; see ``action_names``) followed, when
    ``view_actions`` is on, by the rotations ``x x' y y' z z'``.  Face turns act
    on the held cube (after ``y``, ``R`` turns the face now on the right)
    unless ``move_frame="global"``, which keeps them on the original faces.
    Rotations never count as moves and never change whether the cube is solved.

    ``moves=`` (``"quarter"`` or ``"face"``) is the deprecated spelling of
    ``metric=``: it still works, with a ``FutureWarning``.

    Reward is sparse: 1.0 on the step that solves the cube.  The episode
    terminates when solved and truncates after ``max_steps`` actions (``None``
    for no limit).

    ``max_moves`` and ``max_rotations`` are the episode's move budget (face
    turns, counted in the metric's actions: quarter turns or face turns) and
    view-rotation budget (``None``: unbounded).  A face turn past the budget
    is refused: the cube does not change, the step truncates and
    ``info["refused"]`` says why.  The face turn that spends the budget
    without solving truncates too: with no turn left the cube cannot be
    solved.  A refused rotation truncates only once no face turn is left
    (face turns may still solve the cube).  Refused actions count as neither
    steps nor moves, but they count toward ``max_steps``, so refusals cannot
    keep an episode going forever.  ``info["moves_left"]`` and
    ``info["rotations_left"]`` are reported where a budget is set.  The reset
    options ``max_moves`` and ``max_rotations`` set one episode's budgets in
    place of the env's own (what ``run_episode`` does for an env without one,
    leaving the env as it was given).

    The observation is the held cube's colours: ``obs_format="indices"``
    (default) gives 54 colour indices, ``"onehot"`` the (54, 6) uint8 rows
    that Tier 1's default form shows (made here so that form needs no
    per-step conversion).  Each step returns a fresh array.
    """

    action_space: spaces.Discrete
    _solved: bool  # set with the state (the ``state`` setter)

    metadata = {"render_modes": ["ansi", "rgb_array"] + (["human"] if display_available() else []), "render_fps": 4}

    def __init__(
        self,
        depth: int = 1,
        metric: Metric | None = None,
        view_actions: bool = False,
        move_frame: str = "held",
        max_steps: int | None = INTERACTION_STEPS,
        render_mode: str | None = None,
        generator: Generator | None = None,
        obs_format: str = "indices",
        moves: str | None = None,
        max_moves: int | None = None,
        max_rotations: int | None = None,
    ) -> None:
        if obs_format not in CORE_OBS_FORMATS:
            raise ValueError(f"obs_format must be one of {CORE_OBS_FORMATS}, got {obs_format!r}")
        self.metric: Metric = metric_argument(metric, moves)
        if move_frame not in ("held", "global"):
            raise ValueError(f"move_frame must be 'held' or 'global', got {move_frame!r}")
        if render_mode == "human" and not display_available():
            raise ValueError("render_mode='human' needs a display (DISPLAY is not set); use 'rgb_array' or 'ansi'")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']}, got {render_mode!r}")
        self._window: Window | None = None
        self.depth = _count(depth, "'depth'", 0)
        self.move_frame = move_frame
        self.max_steps = max_steps
        self.set_budget(max_moves, max_rotations)
        self.render_mode = render_mode
        self.generator = generator or CertifiedGenerator()
        turns = turn_actions(self.metric)
        self.n_turns = len(turns)
        self.view_actions = bool(view_actions)
        self.action_names: tuple[str, ...] = turns + (VIEW_ACTIONS if view_actions else ())
        self._action_moves = [MOVE_INDEX[a] for a in self.action_names]
        self._n_actions = len(self.action_names)
        self.action_space = spaces.Discrete(self._n_actions)
        self.obs_format = obs_format
        if obs_format == "onehot":
            self.observation_space = spaces.Box(0, 1, shape=(N_STICKERS, 6), dtype=np.uint8)
        else:
            self.observation_space = spaces.Box(0, 5, shape=(N_STICKERS,), dtype=np.uint8)
        self._work = np.zeros(_WORK_SIZE, dtype=np.uint8)
        self._bind_work_buffer()
        self._snapshot: np.ndarray | None = None
        self.state = SOLVED
        self.instance: Instance | None = None
        self._episode_info = self._info_template(None)
        self.steps = 0
        self.moves = 0
        self._refused = 0

    def set_budget(self, max_moves: int | None, max_rotations: int | None) -> None:
        """Set the move and rotation budgets (``None``: unbounded); they apply from the next step on.

        They are the env's own: an episode whose reset options give ``max_moves`` or ``max_rotations``
        plays under those instead, and the next reset without them goes back to these."""
        self._apply_budget(max_moves, max_rotations)
        self._own_budget = (self.max_moves, self.max_rotations)

    @property
    def own_budget(self) -> tuple[int | None, int | None]:
        """The env's own ``(max_moves, max_rotations)``, which an episode's reset options may replace."""
        return self._own_budget

    def _apply_budget(self, max_moves: int | None, max_rotations: int | None) -> None:
        self.max_moves = None if max_moves is None else _count(max_moves, "max_moves (None or an int)", 1)
        self.max_rotations = None if max_rotations is None else _count(max_rotations, "max_rotations (None or an int)", 0)
        self._budgeted = self.max_moves is not None or self.max_rotations is not None

    @property
    def move_unit(self) -> str:
        """What one face-turn action is in this env's metric: ``quarter turns`` or ``face turns``."""
        return "quarter turns" if self.metric == "quarter" else "face turns"

    def budget_spent(self, kind: str = "moves") -> str:
        """The sentence that says a budget (``moves`` or ``rotations``) is used up, as agents are told."""
        if kind == "moves":
            return f"the move budget ({self.max_moves} {self.move_unit}) is used up"
        return f"the rotation budget ({self.max_rotations} view rotations) is used up"

    # --- Gymnasium API -------------------------------------------------
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=seed)
        self.instance = self._instance_from({} if options is None else options)
        episode = options or {}
        self._apply_budget(episode.get("max_moves", self._own_budget[0]), episode.get("max_rotations", self._own_budget[1]))
        self._episode_info = self._info_template(self.instance)
        self.state = self.instance.state
        self.steps = 0
        self.moves = 0
        self._refused = 0
        if self.render_mode == "human":
            self.render()  # Gymnasium's convention: a human-mode env draws itself on every reset and step
        return self._obs_view.copy(), self._info()

    def step(self, action: int | np.integer) -> tuple[np.ndarray, SupportsFloat, bool, bool, dict[str, Any]]:
        if self.instance is None:
            raise RuntimeError("call reset() before step()")
        if action.__class__ is not int or not 0 <= action < self._n_actions:
            action = self._check_action(action)
        if self._budgeted and self._over_budget(action):
            return self._refuse(action)
        was_solved = self._solved
        move = self._action_moves[action]
        if self.move_frame == "global" and action < self.n_turns:
            move = self._global_turn(action)
        self._solved = solved = self._kernel(self._work, move)
        self._snapshot = None
        self.steps = steps = self.steps + 1
        self.moves += action < self.n_turns
        reward = 1.0 if solved and not was_solved else 0.0
        truncated = self.max_steps is not None and steps + self._refused >= self.max_steps and not solved
        if self._budgeted and not solved and self._turns_spent():
            truncated = True
        if self.render_mode == "human":
            self.render()
        return self._obs_view.copy(), reward, solved, truncated, self._info()

    def _turns_spent(self) -> bool:
        return self.max_moves is not None and self.moves >= self.max_moves

    def _over_budget(self, action: int) -> bool:
        if action < self.n_turns:
            return self._turns_spent()
        return self.max_rotations is not None and self.rotations >= self.max_rotations

    @property
    def rotations(self) -> int:
        """View rotations taken this episode (every action is a face turn or a rotation)."""
        return self.steps - self.moves

    def _refuse(self, action: int) -> tuple[np.ndarray, SupportsFloat, bool, bool, dict[str, Any]]:
        """The step of an action past its budget: nothing changes, and ``info["refused"]`` says why."""
        self._refused += 1
        info = self._info()
        info["refused"] = self.budget_spent("moves" if action < self.n_turns else "rotations")
        out_of_steps = self.max_steps is not None and self.steps + self._refused >= self.max_steps
        truncated = not self._solved and (self._turns_spent() or out_of_steps)
        return self._obs_view.copy(), 0.0, self._solved, truncated, info

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
    def _bind_work_buffer(self) -> None:
        """Name the parts of the work buffer that steps read (views, so the
        kernel's writes show through) and the kernel that writes them."""
        self._kernel = _compiled_step_kernel()
        work = self._work
        self._held = work[:N_STICKERS]
        self._letters = work[_LETTERS:_ONEHOT]
        if self.obs_format == "onehot":
            self._obs_view = work[_ONEHOT:].reshape(N_STICKERS, 6)
        else:
            self._obs_view = work[_COLOURS:_LETTERS]

    def __getstate__(self) -> dict[str, Any]:
        """Pickle and deepcopy without the views (copied, they would stop aliasing
        the buffer) or the compiled kernel (not picklable); loading rebinds them."""
        state = self.__dict__.copy()
        for name in _UNPICKLED:
            del state[name]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._bind_work_buffer()

    @property
    def state(self) -> np.ndarray:
        """The held cube's 54 sticker ids (uint8).

        A new array after each step or reset that the env never changes later,
        so callers may keep it; copied out of the work buffer on first read, so
        steps nobody inspects skip the copy.
        """
        if self._snapshot is None:
            self._snapshot = self._held.copy()
        return self._snapshot

    @state.setter
    def state(self, value: np.ndarray) -> None:
        self._held[:] = value
        self._solved = self._kernel(self._work, _NO_MOVE)
        self._snapshot = None

    @property
    def is_solved(self) -> bool:
        return self._solved

    @property
    def facelets(self) -> str:
        """Ground-truth 54-character string of the held cube (runners and tests only)."""
        return self._letters.tobytes().decode("ascii")

    def _check_action(self, action: Any) -> int:
        """The action as an int; rejects non-integers and out-of-range values."""
        try:
            a = operator.index(action)
        except TypeError:
            raise ValueError(f"action {action!r} is not an integer in Discrete({self.action_space.n})") from None
        if not 0 <= a < self.action_space.n:
            raise ValueError(f"action {action!r} is not in Discrete({self.action_space.n})")
        return a

    def _global_turn(self, action: int) -> int:
        """Engine move of a face-turn action in the global frame: the same turn of
        the held face that now carries the named face's original centre."""
        name = self.action_names[action]
        home = FACES.index(name[0])
        held_face = FACES[int(np.flatnonzero(self._held[list(CENTRES)] // 9 == home)[0])]
        return MOVE_INDEX[held_face + name[1:]]

    def _instance_from(self, options: Any) -> Instance:
        if not isinstance(options, dict):
            raise ValueError(f"reset options must be a dict, got {type(options).__name__}")
        unknown = set(options) - set(_RESET_KEYS)
        if unknown:
            raise ValueError(f"unknown reset option(s) {sorted(map(repr, unknown))}; expected one of {_RESET_KEYS}")
        given = [k for k in ("state", "scramble", "depth", "instance") if k in options]
        if len(given) > 1:
            raise ValueError(f"reset options {given} conflict: give only one of them")
        if "state" in options:
            raw = options["state"]
            state = from_facelets(raw) if isinstance(raw, str) else validate_state(raw)
            return Instance(state=state, scramble="", depth=-1, metric=self.metric)
        if "scramble" in options:
            if not isinstance(options["scramble"], str):
                raise ValueError(f"reset option 'scramble' must be a move string like \"R U F'\", "
                                 f"got {type(options['scramble']).__name__}")
            moves = parse_array(options["scramble"])
            state = kernels.apply_moves(SOLVED, TABLE, moves)
            return Instance(state=state, scramble=options["scramble"], depth=-1, metric=self.metric)
        if "instance" in options:
            return self._shipped_instance(_int_option(options, "instance"))
        depth = _int_option(options, "depth") if "depth" in options else self.depth
        return self.generator(depth, self.metric, self.np_random)

    def _shipped_instance(self, index: int) -> Instance:
        lookup = getattr(self.generator, "instance", None)
        if lookup is None:
            raise NoInstanceSetError("reset(options={'instance': k}) needs a generator with shipped instance sets")
        return lookup(self.depth, self.metric, index)

    @staticmethod
    def _info_template(inst: Instance | None) -> dict[str, Any]:
        """An episode's ``info``, its per-step entries still blank: copied each step, not rebuilt."""
        return {
            "facelets": "",
            "scramble": inst.scramble if inst else "",
            "depth": inst.depth if inst else -1,
            "distance": inst.distance if inst else None,
            "steps": 0,
            "moves": 0,
            "is_success": False,
        }

    def _info(self) -> dict[str, Any]:
        info = self._episode_info.copy()
        info["facelets"] = self._letters.tobytes().decode("ascii")  # self.facelets, minus a property call
        info["steps"] = self.steps
        info["moves"] = self.moves
        info["is_success"] = self._solved
        if self._budgeted:
            if self.max_moves is not None:
                info["moves_left"] = self.max_moves - self.moves
            if self.max_rotations is not None:
                info["rotations_left"] = self.max_rotations - self.rotations
        return info


def _int_option(options: dict[str, Any], key: str) -> int:
    """A reset option that must be a non-negative int."""
    return _count(options[key], f"reset option {key!r}", 0)


def _count(value: Any, what: str, minimum: int) -> int:
    """An int >= ``minimum``; ``"3"``, ``2.5``, ``True`` and ``None`` are refused with a message."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise ValueError(f"{what} must be an int >= {minimum}, got {value!r} ({type(value).__name__})")
    if value < minimum:
        raise ValueError(f"{what} must be an int >= {minimum}, got {value}")
    return int(value)


__all__ = ["CubeEnv", "InvalidStateError", "INTERACTION_STEPS"]
