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
    """A Rubik's cube to solve, one action per face turn or view rotation: the core of the four tiers.

    ## Description

    CubeBench's cube as a POMDP: the cube starts a certified number of moves from solved and the agent
    turns faces until every face is one colour, seeing the state whole (an MDP) or in part. `import cubebench`
    registers four ids (`gym.make("cubebench:CubeBench-Vertex-v0")` imports the package first). Each id is
    this env, a reward wrapper and the tier's observation wrapper (`cubebench.wrappers`), built by
    `cubebench.make_cube_env(tier, ...)`:

    | id | tier | observation wrapper | the agent sees | view actions |
    |---|---|---|---|---|
    | `CubeBench-Symbolic-v0` | 1, full state | `SymbolicObservation` | the 54 stickers (one-hot) | no |
    | `CubeBench-Visual-v0` | 2, unfolded net | `NetObservation` | the cross net, an RGB image | no |
    | `CubeBench-Face-v0` | 3a, partial | `FaceViewObservation` | the held cube's F face | yes |
    | `CubeBench-Vertex-v0` | 3b, partial | `VertexViewObservation` | U, F and R from the UFR corner | yes |

    The Vertex image is drawn by a 2D painter (numpy and Pillow, no GPU) by default; `renderer="pyrender"`
    draws the cubies in 3D with OpenGL (the `render3d` extra; same camera, same sticker colours at the
    same pixels). The ids wrap the env in `RetryingPassiveEnvChecker`: Gymnasium's passive checker, but
    one that checks a first `reset` again after it raised (Gymnasium 1.4's own then fails the next `step`
    with a `TypeError`). They are registered with `disable_env_checker=True`, so `gym.make` adds the
    stock checker only when given `disable_env_checker=False`.

    ## Action Space

    `Discrete(12)` with `metric="quarter"` (default): `U U' D D' L L' R R' F F' B B'` in that order;
    `Discrete(18)` with `metric="half"`: each face's `X X' X2`. Face and Vertex add the six view
    rotations `x x' y y' z z'` (`Discrete(18)` or `Discrete(24)`). `env.unwrapped.action_names` lists
    them. Face turns act on the held cube (after `y`, `R` turns the face now on the right) unless
    `move_frame="global"`, which keeps each turn on its original face. Rotations never count as moves
    and never change whether the cube is solved. An action outside the space raises `ValueError`.

    ## Observation Space

    Stickers are in Kociemba's `URFDLB` order, row-major as on the standard net (docs/conventions.md); a
    colour is the index 0-5 of the face whose centre has it in the solved cube. Every step returns a new
    object.

    | tier | `obs_format` (default first) | space |
    |---|---|---|
    | Symbolic | `onehot` | `Box(0, 1, (54, 6), uint8)`, row `i` one-hot in sticker `i`'s colour |
    | | `indices` | `Box(0, 5, (54,), uint8)` |
    | | `text` | `Text(54)`: `letters="faces"` names each sticker by the face whose centre has its colour (a `URFDLB` string a solver accepts however the cube is held), `"colours"` writes `WRGYOB` |
    | Visual, Face, Vertex | `image` | `Box(0, 255, (S, S, 3), uint8)`, `S = image_size` |
    | | `text` | letter grids: the labelled net, a titled 3x3 grid, or three |
    | Face, Vertex | `indices` | `Box(0, 5, (9,), uint8)` / `Box(0, 5, (27,), uint8)`: the colour indices of exactly the stickers shown (F; U, R, F), facelet order, the compact form for RL |

    `CubeEnv` itself observes `indices` (default) or `onehot`.

    ## Rewards

    `reward` names one of `cubebench.engine.rewards.REWARDS`:

    - `none` (default; alias `sparse`): 1.0 on the step that solves, else 0.
    - The dense rewards pay a potential difference `phi(s') - phi(s)`, so an episode's rewards sum to
      `phi(end) - phi(start)`, and add no bonus on solving (every potential peaks there): `sticker`,
      phi = stickers matching their face's centre (6..54); `face`, phi = completed faces (0..6);
      `heuristic`, phi = minus the length, in the env's metric, of Kociemba's two-phase solution of the
      cube turned to reference orientation (the paper's "distance estimation via classic solving
      algorithms": only an estimate, averaging 4.7 quarter turns at certified depth 3, 11 at depth 8 and
      28-31 at depths 12-20); `oracle`, phi = minus the exact optimal distance (its admissible lower bound
      when the optimal solver needs more than `reward_kwargs={"time_budget": 0.5}` seconds;
      `info["phi_source"]` says which). An agent that may try a move and undo it reads an optimal plan
      off `oracle` (unbudgeted, such a probe solved all 20 instances it tried at each of depths 3, 4, 8
      and 12: `python benchmarks/budget_probes.py --reward oracle --depths 3 4 8 12 --orders 1
      --seeds 0`): it is for RL research, and the runner's suites refuse it.

    View rotations pay 0 under every reward: each potential reads the cube relative to its centres.
    `info["phi"]` shows the potential on Symbolic only (see Info).

    ## Starting State

    `reset(seed=s)` draws a state whose optimal distance is certified to equal the env's `depth` in its
    metric: a seeded non-redundant `depth`-move scramble, kept only if its exact distance is `depth`.
    Depths up to 2 quarter (3 half) turns are optimal by construction, up to 10 (9) are certified by the
    table-free oracle (`cubebench.solver.oracle`), deeper ones by the exact optimal solver, whose 0.9 GB
    of tables are built on first use (2-15 minutes, announced on stderr). Depths beyond 22 quarter (18
    half) turns raise at once: random scrambles do not reach them. `generator=ScrambleGenerator()`
    gives uncertified scrambles (`info["distance"]` is `None`). `options` take one start:

    - `{"depth": d}`: as above, at depth `d`.
    - `{"instance": k}`: the k-th shipped certified instance of the env's `depth` and metric (the
      package `cubebench.instances`; `$CUBEBENCH_INSTANCES_DIR` overrides the folder): 100 per depth
      1-4, 8, 12, 16 and 20 (all 12 quarter-turn and 18 half-turn ones at depth 1; 2 at half-turn depth 20).
    - `{"scramble": "R U F'"}`: those moves applied to the solved cube.
    - `{"state": "<54 letters>"}` or a sticker-id array: held as its centres say.

    and may add `max_moves` and `max_rotations` (see Move budget). Unknown keys, two starts, options that
    are not a dict, `depth` or `instance` not an int >= 0 (`"3"`, `2.5`, `True`, `None`) and a scramble
    that is not a string raise `ValueError` with a message; a bad state raises `InvalidStateError` and a
    bad move `NotationError`, both `ValueError`s.

    ## Episode End

    1. Termination: the cube is solved (every face one colour, however it is held). A depth-0 start is
       solved at reset (`info["is_success"]`); it ends at the first step that leaves it solved.
    2. Truncation: after `max_steps` actions (default 20, the paper's interaction steps; `None`: no
       limit), counted by the env itself (the spec adds no `TimeLimit`); and by the move budget.

    ## Move budget

    `max_moves` caps an episode's face turns, counted in the metric's actions (a half turn costs two
    quarter turns), `max_rotations` its view rotations; `None` (default) is unbounded. The env enforces
    them, so every way of acting goes through them. A face turn past the budget is refused: the cube
    does not change, the step pays 0 and returns `truncated=True` and `info["refused"]` (the reason).
    The face turn that spends the budget without solving truncates too; a rotation past its budget is
    refused the same way but truncates only once no face turn is left. Refused actions count as neither
    steps nor moves, but toward `max_steps`. The reset options `max_moves` and `max_rotations` replace
    the env's own budgets (`own_budget`) for one episode.

    `cubebench.agents.run_episode` gives an env without a budget its depth's unless `capped=False` (the
    runner's default `--rules paper`: the paper's 20 steps, no cap; `--rules strict` caps).
    `cubebench.budgets.move_budget(depth, metric)` is 5 quarter turns at depths 0-2, 22 at depth 3 and 40
    from depth 4 (in face turns 5, then 30), 40 (30) for a given state or scramble, with 40 view rotations
    on Face and Vertex:

    ```
    budget(d) = min(cap, max(d + 3, the largest B with blind_reach(B, d) * largest_odds(d) <= 5 % * 2/3 / 1.6))
    ```

    An agent that sees only whether the cube is solved walks one path of turns, which passes at most
    `blind_reach(B, d)` positions at depth `d` (`(B - d) // 2 + 1` in quarter turns); it solves an
    instance only if one is its inverse. `largest_odds(d)`, the generator's largest probability for one
    position (1/60, 1/480, 1/2400 at quarter-turn depths 2-4; 1/135, 1/1620, 1/6075 in face turns),
    bounds what knowing the generator is worth; 2/3 leaves room for a run's seeds, 1/1.6 for sets that
    over-represent likely positions. Depth 3's 22 still fits the solver tools' plans (at most 21 quarter
    turns however the cube is held). Depth 2 keeps the optimal plan plus 3 (a bound of 3.3 %); depth 1,
    where one guess solves 1 in 12, gets depth 2's budget. `cubebench.budgets` derives the rule;
    `tests/engine/test_budgets.py` checks it on the shipped sets.

    The cap, 40 quarter (30 face) turns, holds any optimal plan (at most 26 quarter, 20 face turns) with
    room to explore and the two-phase plan of every shipped instance however it is held (at most 36
    quarter, 23 face turns); trying every 2-move sequence, each undone, takes 576. Measured with `python
    benchmarks/budget_probes.py`: a probe following the `heuristic` reward by trial and error needed 46
    moves at the fewest at depth 8; drawing a new move order each step it solved 4 of 1,000 depth-8
    attempts within 40 moves, a face-cycling probe 5 of 500. That luck is what a blind agent gets at
    depth 8. `tests/agents/test_validity.py` plays enumeration (depths 3, 4) and reward probing (depth 8)
    through the CodeAct tools on every tier: under the budget they solve nothing.

    ## Info

    - `facelets`: the held cube's 54-letter string; `scramble`: the start's scramble (`""` for a state)
    - `depth`: the certified depth (-1 for a given state or scramble); `distance`: the exact optimal
      distance where certified, else `None`
    - `steps`: actions taken (refused ones excluded); `moves`: face turns among them
    - `is_success`: whether the cube is solved
    - `moves_left`, `rotations_left`: what is left of a budget, where one is set; `refused`: why an
      action was refused
    - `reward_kind`, `phi`, `phi_source`: a dense reward's name, potential and (oracle) its source

    Visual, Face and Vertex keep only `depth`, `steps`, `moves`, `is_success`, `reward_kind`,
    `moves_left`, `rotations_left` and `refused` (`cubebench.tiers.PUBLIC_INFO_KEYS`) unless
    `debug=True`: everything else reveals the state. Runners read the truth from `env.unwrapped.facelets`
    and `env.unwrapped.state`, the 54 sticker ids: a new array after each step that the env never changes
    (assigning `state` sets the cube).

    ## Rendering

    `render_mode="ansi"` returns the coloured text net, `"rgb_array"` an image, and `"human"` shows the net
    in a matplotlib window (offered only where a display exists). In `rgb_array` mode Symbolic and Visual
    draw the whole net at 224 pixels, and Face and Vertex what the agent sees: the tier's own image at
    `image_size`, whatever `obs_format` is; `render_view="net"` draws the whole net instead. `ansi` and the
    `human` window show the whole net on every tier, for people watching.

    ## Arguments

    | argument | values | default |
    |---|---|---|
    | `depth` | certified optimal distance of `reset()` starts | 1 |
    | `metric` | `quarter` (12 turns) or `half` (18); `moves=` and the values `face`, `htm`, `qtm` still work, with a `FutureWarning` | `quarter` |
    | `reward` | `none`, `sparse`, `sticker`, `face`, `heuristic`, `oracle`; `reward_kwargs` for `oracle`'s `time_budget` | `none` |
    | `max_steps` | actions before truncation, or `None` | 20 |
    | `max_moves`, `max_rotations` | the move budget, or `None`; an int >= 1 and an int >= 0 | `None` |
    | `render_mode` | `ansi`, `rgb_array` (`human` with a display) | `None` |
    | `obs_format` | Symbolic `onehot`, `indices`, `text`; the others `image`, `text` (Face and Vertex also `indices`) | the first |
    | `letters` | Symbolic text: `faces` or `colours` | `faces` |
    | `image_size` | image side in pixels: at least 48 (net), 32 (Vertex), 16 (Face) | 224 |
    | `renderer` | Vertex: `painter` or `pyrender` | `painter` |
    | `move_frame` | `held` or `global` | `held` |
    | `debug` | keep the ground truth in `info` on Visual, Face and Vertex | `False` |
    | `render_view` | Face and Vertex: what `rgb_array` renders, `agent` (the tier's image) or `net` (the whole net) | `agent` |
    | `generator` | `CertifiedGenerator()` or `ScrambleGenerator()` (`cubebench.generators`) | certified |

    `letters`, `image_size`, `renderer`, `debug` and `render_view` belong to the tiers named beside them: given
    to another tier with any value but the default, they are a `ValueError` naming the tiers that read them.

    ```pycon
    >>> import gymnasium as gym
    >>> import cubebench
    >>> env = gym.make("CubeBench-Face-v0", depth=2, reward="sticker", max_moves=5)
    >>> env
    <OrderEnforcing<RetryingPassiveEnvChecker<FaceViewObservation<StickerReward<CubeEnv<CubeBench-Face-v0>>>>>>
    >>> obs, info = env.reset(seed=0)
    >>> obs.shape, info
    ((224, 224, 3), {'depth': 2, 'steps': 0, 'moves': 0, 'is_success': False, 'moves_left': 5, 'reward_kind': 'sticker'})
    >>> env.unwrapped.action_names[-6:]
    ('x', "x'", 'y', "y'", 'z', "z'")

    ```

    ## Vectorized environment

    `gym.make_vec(id, num_envs=N)` builds the native `cubebench.envs.vector_env.CubeVectorEnv` for every
    tier: Symbolic (`onehot`, `indices`), Visual (`image`), Face and Vertex (`image`, `indices`, with the
    view rotations), which steps every cube in one Numba call and paints images from the painter's template
    (docs/rl.md). The native env autoresets in `NEXT_STEP` mode by default, draws uncertified seeded
    scrambles unless given `generator=CertifiedGenerator()`, pays `none`, `sticker` or `face`, and has no
    move budget; anything else needs `vectorization_mode="sync"`.
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
