"""A native batched ``gymnasium.vector.VectorEnv`` for every tier with :attr:`~cubebench.tiers.TierSpec.vector_forms`.

All sub-environments live in one state array and one Numba call per ``step``
(:mod:`cubebench.envs.vector_kernels`) does everything for
every sub-environment: turn the face (or, on the partial tiers, the whole
cube: a view rotation), test for solved, compute the (sparse or
dense) reward, flag termination and truncation, autoreset with a fresh seeded
scramble and write the observation, straight into the array ``step`` returns.
That is what makes it two orders of magnitude faster than a ``SyncVectorEnv``
of :class:`~cubebench.CubeEnv`.

Observations are the tier's own: Symbolic's one-hot rows or 54 colour indices;
a partial tier's compact ``indices`` form, the colour indices of exactly the
stickers it shows in the held orientation (Face: the F face's 9, Vertex: U, R
and F's 27, facelet order), nothing else; and the ``image`` form of the
pictured tiers, painted for the whole batch in one Numba call from the
renderer's pre-drawn template (:class:`~cubebench.render.canvas.StickerCanvas`,
no GL), the same pixels as the single env's painter.

Sub-environment ``i`` is *exactly* ``make_cube_env(tier, ...)`` seeded with
``seed + i`` (Gymnasium's ``SyncVectorEnv`` convention): each keeps its own
``np.random.Generator`` built as Gymnasium's ``reset(seed=...)`` builds it, and
the kernel draws its scrambles from that generator's bit stream as
:func:`cubebench.engine.scramble.scramble` does, so
scrambles, and hence whole trajectories including autoresets, are the same
bit for bit (``tests/envs/test_vector_env.py`` checks it against ``SyncVectorEnv``).
Generators other than :class:`~cubebench.generators.ScrambleGenerator` (the
certified curriculum, custom ones) are called from Python, per reset, with
the same per-env generator: exact as well, slower only on reset steps.

Autoreset: all three Gymnasium 1.x modes.  The default is
``AutoresetMode.NEXT_STEP`` (Gymnasium's default, same as ``SyncVectorEnv``:
the step after an episode ends ignores its action, resets that sub-env and
returns reward 0).  ``SAME_STEP`` resets in the ending step and puts the
last observation in ``info["final_obs"]`` (and ``info["final_info"]``), as
Stable-Baselines3 and most training loops expect; ``DISABLED`` leaves resets to
``reset(options={"reset_mask": mask})``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.utils import seeding
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from ..engine.facelets import COLOUR_RGB, FACES, N_STICKERS
from .cube_env import INTERACTION_STEPS
from ..engine.metric import Metric, metric_argument, turn_actions
from ..engine.moves import MOVE_INDEX, SPARSE_COUNT, SPARSE_DST, SPARSE_SRC, VIEW_ACTIONS
from ..engine.rewards import NATIVE_REWARDS, REWARD_SPECS, parse_reward
from ..engine.scramble import scramble_move_table
from ..engine.state import to_facelets
from ..engine import simd
from ..generators import Generator, ScrambleGenerator
from ..render.ansi import net_text
from ..render.canvas import StickerCanvas
from ..render.net import render_net
from ..tiers import TIER_SPECS, tier_names
from .vector_kernels import (
    _MODES, _NEXT32, _all_obs, _all_solved, _paint_batch, _reset_envs, _status, _step_parallel, _step_serial,
)

PARALLEL_MIN_ENVS = 1 << 15
"""Batches at least this large are stepped over numba's threads (``parallel=None``)."""


class CubeVectorEnv(VectorEnv):
    """``num_envs`` cubes stepped together in one Numba call per step.

    Same keyword arguments as :func:`cubebench.make_cube_env` where they apply
    (``tier`` ``"symbolic"`` with ``obs_format`` ``"onehot"`` or ``"indices"``,
    ``"visual"`` with ``obs_format="image"``, ``"face"`` or ``"vertex"`` with
    ``"image"`` or the compact ``"indices"``: each tier's
    :attr:`~cubebench.tiers.TierSpec.vector_forms`, default first; the partial
    tiers add the view rotations ``x x' y y' z z'`` to the actions, as the single
    env does, and ``move_frame="global"`` keeps face turns on their original
    faces after them; ``renderer`` only ``"painter"``; ``reward`` one of
    :data:`~cubebench.engine.rewards.NATIVE_REWARDS`: ``none`` (alias ``sparse``),
    ``sticker`` or ``face``; ``metric`` ``"quarter"`` or ``"half"``, with
    ``moves=`` its deprecated spelling); ``max_episode_steps`` (which ``gymnasium.make_vec`` may pass)
    overrides ``max_steps``.  ``autoreset_mode`` picks the Gymnasium autoreset
    mode (default ``NEXT_STEP``); ``copy=False`` returns the same observation
    buffer every step (faster; it is overwritten by the next step);
    ``parallel`` splits the step over numba's threads (default: when
    ``num_envs >= PARALLEL_MIN_ENVS``); ``vbmi`` picks the AVX-512 VBMI step
    kernels (default: when :data:`cubebench.engine.simd.HAS_VBMI`) or, with
    ``False``, the portable ones (the same results, bit for bit).

    ``info`` holds, per sub-env with Gymnasium's ``_key`` masks: ``is_success``,
    ``depth`` (the instance's depth), ``steps``, ``moves`` and, with a dense
    reward, ``phi`` and ``reward_kind``; ground truth is in :attr:`states` and
    :meth:`facelets` (never in ``info``).  Per-env curriculum depths for the
    next autoresets are set with :meth:`set_depths`.
    """

    metadata = {"autoreset_mode": AutoresetMode.NEXT_STEP, "render_modes": ["ansi", "rgb_array"], "render_fps": 4}

    def __init__(
        self,
        num_envs: int = 1,
        *,
        tier: str = "symbolic",
        depth: int = 1,
        reward: str = "none",
        metric: Metric | None = None,
        max_steps: int | None = INTERACTION_STEPS,
        max_episode_steps: int | None = None,
        obs_format: str | None = None,
        image_size: int = 224,
        move_frame: str = "held",
        letters: str = "faces",
        generator: Generator | None = None,
        render_mode: str | None = None,
        renderer: str = "painter",
        autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP,
        copy: bool = True,
        parallel: bool | None = None,
        vbmi: bool | None = None,
        moves: str | None = None,
        max_moves: int | None = None,
        max_rotations: int | None = None,
    ) -> None:
        if max_moves is not None or max_rotations is not None:
            raise ValueError("the native vector env has no move budget (its episodes end after max_steps actions); "
                             "use vectorization_mode='sync' for budgeted envs")
        reward = parse_reward(reward)
        self._check_args(num_envs, tier, reward, obs_format, move_frame, letters, render_mode)
        self._check_unread(tier, image_size, letters, renderer)
        self.num_envs = int(num_envs)
        self.tier, self.reward, self.copy, self.render_mode = tier, reward, bool(copy), render_mode
        self.metric: Metric = metric_argument(metric, moves)
        self.autoreset_mode = AutoresetMode(autoreset_mode)
        self.metadata = {**self.metadata, "autoreset_mode": self.autoreset_mode}
        limit = max_episode_steps if max_episode_steps is not None else max_steps
        self.max_steps = None if limit is None else int(limit)
        self.generator = generator or ScrambleGenerator()
        self._native = type(self.generator) is ScrambleGenerator
        self._spec = TIER_SPECS[tier]
        turns = turn_actions(self.metric)
        self.n_turns = len(turns)
        self.action_names: tuple[str, ...] = turns + (VIEW_ACTIONS if self._spec.partial else ())
        self._action_moves = np.array([MOVE_INDEX[a] for a in self.action_names], dtype=np.int64)
        self._homes, self._frame_moves = self._frame_tables(move_frame == "global" and self._spec.partial)
        self._scr_moves = scramble_move_table(self.metric)
        self._form = obs_format or self._spec.vector_forms[0]
        self._visible = np.array(self._spec.visible, dtype=np.int64)  # positions the tier shows, facelet order
        # what the kernels get: None for the whole cube (their fast path), else the positions to gather
        self._gather = None if len(self._visible) == N_STICKERS else self._visible
        self._phi_public = not self._spec.hides_state  # the dense reward's potential is in info
        self.image_size = int(image_size)
        self._setup_spaces()
        self._canvas = self._spec.canvas(self.image_size) if self._form == "image" else None
        plan = self._paint_plan(self._canvas) if self._canvas is not None else None
        self._runs: np.ndarray | None = None if plan is None else plan[0]
        self._pattern: np.ndarray | None = None if plan is None else plan[1]
        if self._canvas is not None:
            self._check_painter()
        self._parallel = self.num_envs >= PARALLEL_MIN_ENVS if parallel is None else bool(parallel)
        if vbmi and not simd.HAS_VBMI:
            raise ValueError("vbmi=True needs a CPU with AVX-512 VBMI (and CUBEBENCH_SIMD not 0)")
        self._vbmi = simd.INDEX64 if (simd.HAS_VBMI if vbmi is None else vbmi) else None
        self._allocate(int(depth))

    # --- construction ------------------------------------------------------
    @staticmethod
    def _check_args(num_envs, tier, reward, obs_format, move_frame, letters, render_mode) -> None:
        if int(num_envs) < 1:
            raise ValueError(f"num_envs must be >= 1, got {num_envs}")
        if tier not in TIER_SPECS or not TIER_SPECS[tier].vector:
            raise ValueError(f"CubeVectorEnv supports the {tier_names('vector')} tiers, got {tier!r}; "
                             "use gymnasium.make_vec(..., vectorization_mode='sync') for the others")
        forms = TIER_SPECS[tier].vector_forms
        if obs_format not in (None, *forms):
            raise ValueError(f"obs_format {obs_format!r} is not batched natively for tier {tier!r}; "
                             f"use one of {list(forms)} or vectorization_mode='sync'")
        if reward not in NATIVE_REWARDS:
            raise ValueError(f"reward {reward!r} is not computed natively; use one of "
                             f"{list(NATIVE_REWARDS)} or vectorization_mode='sync' (heuristic and oracle call a solver)")
        if move_frame not in ("held", "global"):
            raise ValueError(f"move_frame must be 'held' or 'global', got {move_frame!r}")
        if render_mode not in (None, "ansi", "rgb_array"):
            raise ValueError(f"render_mode must be None, 'ansi' or 'rgb_array', got {render_mode!r}")

    @staticmethod
    def _check_unread(tier: str, image_size: Any, letters: str, renderer: str = "painter") -> None:
        """Refuse, as ``make_cube_env`` does, a tier option set away from its default that this env does not
        read: ``image_size`` on a tier without a picture (Symbolic), ``letters`` at all (it names the letters of a
        text form, which is not batched natively), a ``renderer`` other than the painter (the batch is painted
        from the painter's template; pyrender draws one env at a time)."""
        if renderer != "painter":
            raise ValueError(f"CubeVectorEnv paints images with the painter's template only, got renderer={renderer!r}; "
                             "use vectorization_mode='sync' for another renderer")
        if not TIER_SPECS[tier].pictured and not (type(image_size) is int and image_size == 224):
            raise ValueError(f"CubeVectorEnv does not read image_size={image_size!r} on tier {tier!r}: image_size is "
                             "an option of the pictured tiers")
        if letters != "faces":
            raise ValueError(f"CubeVectorEnv does not read letters={letters!r}: letters name a text form's stickers, "
                             "and the native vector env batches no text form (use vectorization_mode='sync')")

    def _frame_tables(self, global_frame: bool) -> tuple[np.ndarray | None, np.ndarray]:
        """``(homes, frame_moves)`` for the kernel.  With ``global_frame`` (``move_frame="global"`` on a tier with view
        rotations, where turns keep to their original faces): ``homes[a]`` the face a face turn names (-1 for a
        rotation), ``frame_moves[a, f]`` the same turn on held face ``f``.  Otherwise ``homes`` is ``None`` (numba
        prunes the lookup: each action is its own move)."""
        frame = np.tile(self._action_moves[:, None], (1, len(FACES)))
        if not global_frame:
            return None, frame
        homes = np.full(len(self.action_names), -1, dtype=np.int64)
        for a, name in enumerate(self.action_names[:self.n_turns]):
            homes[a] = FACES.index(name[0])
            frame[a] = [MOVE_INDEX[face + name[1:]] for face in FACES]
        return homes, frame

    @staticmethod
    def _paint_plan(canvas: StickerCanvas) -> tuple[np.ndarray, np.ndarray]:
        """``(runs, pattern)`` of :func:`~cubebench.envs.vector_kernels._paint_batch` for ``canvas``: its sticker
        pixels as runs of consecutive bytes of one slot (first byte, byte count, slot), and each slot's shaded RGB
        of each colour, by the expression :meth:`~cubebench.render.canvas.StickerCanvas.paint` evaluates (so the
        batch paints the same pixels), repeated to the longest run."""
        pixels, owner = canvas.pixels, canvas.owner.astype(np.int64)
        cut = np.flatnonzero((np.diff(pixels) != 1) | (np.diff(owner) != 0)) + 1
        first, end = np.r_[0, cut], np.r_[cut, len(pixels)]
        runs = np.stack([3 * pixels[first], 3 * (end - first), owner[first]], axis=1).astype(np.int64)
        n = canvas.n_slots
        rgb = np.empty((n, 6, 3), dtype=np.uint8)
        for c in range(6):
            rgb[:, c] = np.rint(COLOUR_RGB[np.full(n, c)] * canvas.shade[:, None]).astype(np.uint8)
        return runs, np.ascontiguousarray(np.tile(rgb, (1, 1, int(runs[:, 1].max()) // 3)))

    def _check_painter(self) -> None:
        """Refuse the image form of a tier whose picture is not its canvas painted with the shown stickers' colours
        (the batch paints exactly that): one sample frame, compared with the tier's own image function."""
        colours = (np.arange(N_STICKERS) * 5 % 6).astype(np.uint8)  # every slot gets a colour of its own position
        canvas = self._canvas
        if canvas is None or canvas.n_slots != len(self._visible) or not np.array_equal(
                self._images(colours[self._visible][None])[0], self._spec.image(colours, self.image_size)):
            raise ValueError(f"the {self.tier} tier's image is not its canvas painted with the stickers it shows, so "
                             "CubeVectorEnv cannot paint it in a batch; use obs_format='indices' or "
                             "vectorization_mode='sync'")

    def _setup_spaces(self) -> None:
        single = self._spec.space(self._form, self.image_size)
        self.single_observation_space = single
        self.single_action_space = spaces.Discrete(len(self.action_names))
        self.observation_space = batch_space(single, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)

    def _allocate(self, depth: int) -> None:
        n = self.num_envs
        self._states64 = simd.padded_states(n)  # what the kernels step (64-byte rows)
        self.states = self._states64[:, :N_STICKERS]  # a view: the 54 stickers of each sub-env
        self._depths = np.full(n, depth, dtype=np.int64)
        self._inst_depth = np.full(n, depth, dtype=np.int64)
        self._steps = np.zeros(n, dtype=np.int64)
        self._moves = np.zeros(n, dtype=np.int64)
        self._phi = np.zeros(n, dtype=np.float64)
        self._autoreset = np.zeros(n, dtype=np.bool_)
        self._pending = np.zeros(n, dtype=np.bool_)
        self._final_mask = np.zeros(n, dtype=np.bool_)
        self._final_stats = np.zeros((n, 3), dtype=np.int64)  # steps, moves, depth of the ended episode
        self._final_phi = np.zeros(n, dtype=np.float64)
        self._rewards = np.zeros(n, dtype=np.float64)
        self._terms = np.zeros(n, dtype=np.bool_)
        self._truncs = np.zeros(n, dtype=np.bool_)
        shape = (n, N_STICKERS, 6) if self._form == "onehot" else (n, len(self._visible))
        self._obs = np.zeros(shape, dtype=np.uint8)  # returned by every call with copy=False; image colours
        self._final_obs = np.zeros(shape, dtype=np.uint8)
        self._frames: np.ndarray | None = None  # the images returned by every call with copy=False
        self._rngs: list[np.random.Generator] = []
        self._addrs = np.zeros(n, dtype=np.uint64)
        self._reward_kind = REWARD_SPECS[self.reward].kind
        self._dense = REWARD_SPECS[self.reward].dense
        self._started = False

    # --- Gymnasium API -------------------------------------------------------
    def reset(
        self, *, seed: int | list[int | None] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Reset all sub-envs (or ``options["reset_mask"]``'s); sub-env ``i`` is seeded ``seed + i``.

        ``options={"depth": d}`` (an int or one per sub-env) sets this reset's
        depth only, as in ``CubeEnv``; later autoresets use :meth:`set_depths`'s.
        """
        options = dict(options or {})
        mask = self._reset_mask(options.pop("reset_mask", None))
        depth = options.pop("depth", None)
        if options:
            raise ValueError(f"unknown reset option(s) {sorted(options)}; CubeVectorEnv takes 'depth' and 'reset_mask'")
        self._seed(seed, mask)
        saved = self._depths.copy()
        if depth is not None:
            self._depths[:] = self._check_depths(depth)
        self._pending[:] = mask
        obs = self._obs_target()
        self._start_pending(obs)
        _all_obs(self._states64, self._form == "onehot", self._vbmi, self._gather, obs.reshape(self.num_envs, -1))
        self._depths[:] = saved
        self._autoreset[mask] = False
        self._terms[mask] = False
        self._truncs[mask] = False
        self._started = True
        return self._observation(obs), self._info(mask)

    def step(
        self, actions: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        if not self._started:
            raise RuntimeError("call reset() before step()")
        actions = np.asarray(actions)
        if actions.shape != (self.num_envs,) or not np.issubdtype(actions.dtype, np.integer):
            raise ValueError(f"actions must be {self.num_envs} integers, got shape {actions.shape} {actions.dtype}")
        if actions.size and (actions.min() < 0 or actions.max() >= len(self.action_names)):
            raise ValueError(f"actions must lie in 0..{len(self.action_names) - 1}")
        obs = self._obs_target()
        kernel = _step_parallel if self._parallel else _step_serial
        kernel(self._states64, actions.astype(np.int64, copy=False), self._action_moves, self._homes,
               self._frame_moves, self.n_turns, self._vbmi,
               SPARSE_DST, SPARSE_SRC, SPARSE_COUNT, self._steps, self._moves, self.max_steps or 0,
               self._reward_kind, self._phi, _MODES[self.autoreset_mode], self._autoreset,
               self._form == "onehot", self._gather, obs.reshape(self.num_envs, -1),
               self._final_obs.reshape(self.num_envs, -1),
               self._final_mask, self._rewards, self._terms, self._truncs, self._pending,
               self._inst_depth, self._final_stats, self._final_phi)
        final = self._final_info() if self._final_mask.any() else None
        self._start_pending(obs)
        info = self._info(None)
        if final is not None:
            info.update(final)
        return (self._observation(obs), self._rewards.copy(), self._terms.copy(), self._truncs.copy(), info)

    def render(self) -> tuple[Any, ...] | None:
        """One frame per sub-env in ``render_mode``, as the single env renders: ``ansi`` the net as text,
        ``rgb_array`` the net image, or on a partial tier the tier's own image at ``image_size`` (what the agent
        sees)."""
        if self.render_mode == "ansi":
            return tuple(net_text(s // 9) for s in self.states)
        if self.render_mode == "rgb_array" and self._spec.partial:
            return tuple(self._spec.image(s // 9, self.image_size) for s in self.states)
        if self.render_mode == "rgb_array":
            return tuple(render_net(s // 9) for s in self.states)
        return None

    def close_extras(self, **kwargs: Any) -> None:
        """Nothing to release: the state lives in plain arrays."""

    # --- extras ----------------------------------------------------------------
    def set_depths(self, depths: int | np.ndarray) -> None:
        """Curriculum depth of each sub-env's *next* autoresets (an int or one per sub-env)."""
        self._depths[:] = self._check_depths(depths)

    @property
    def depths(self) -> np.ndarray:
        """The depth each sub-env's next autoreset draws (a copy)."""
        return self._depths.copy()

    def solved(self) -> np.ndarray:
        """Whether each sub-env's cube is solved now."""
        out = np.zeros(self.num_envs, dtype=np.bool_)
        _all_solved(self._states64, self._vbmi, out)
        return out

    def facelets(self, index: int) -> str:
        """Ground-truth 54-character string of sub-env ``index`` (runners and tests only)."""
        return to_facelets(self.states[index])

    # --- helpers ---------------------------------------------------------------
    def _check_depths(self, depths: int | np.ndarray) -> np.ndarray:
        arr = np.broadcast_to(np.asarray(depths, dtype=np.int64), (self.num_envs,))
        if (arr < 0).any():
            raise ValueError(f"depths must be >= 0, got {depths!r}")
        return arr

    def _reset_mask(self, mask: np.ndarray | None) -> np.ndarray:
        if mask is None:
            return np.ones(self.num_envs, dtype=np.bool_)
        if not isinstance(mask, np.ndarray) or mask.dtype != np.bool_ or mask.shape != (self.num_envs,):
            raise TypeError(f"options['reset_mask'] must be a bool array of shape ({self.num_envs},)")
        if not mask.any():
            raise ValueError("options['reset_mask'] must contain at least one True value")
        return mask

    def _seed(self, seed: int | list[int | None] | None, mask: np.ndarray) -> None:
        """Per-env generators exactly as ``Env.reset(seed=...)`` builds them (kept when ``seed`` is None)."""
        if isinstance(seed, (int, np.integer)):
            seeds: list[int | None] = [int(seed) + i for i in range(self.num_envs)]
        elif seed is None:
            seeds = [None] * self.num_envs
        else:
            seeds = list(seed)
            if len(seeds) != self.num_envs:
                raise ValueError(f"seed list must have num_envs={self.num_envs} entries, got {len(seeds)}")
        if not self._rngs:
            self._rngs = [seeding.np_random(s)[0] for s in seeds]
        else:
            for i in np.flatnonzero(mask):
                if seeds[i] is not None:
                    self._rngs[i] = seeding.np_random(seeds[i])[0]
        self._addrs[:] = [g.bit_generator.ctypes.state_address for g in self._rngs]

    def _start_pending(self, obs: np.ndarray) -> None:
        """Start new episodes where ``_pending`` is set (in Numba for scrambles, else via the generator).

        Their observations go to ``obs`` (the batch this call returns).
        """
        if self._native:
            if self._pending.any():
                _reset_envs(self._pending, self._states64, _NEXT32, self._addrs, self._depths, self._scr_moves,
                            self._vbmi, SPARSE_DST, SPARSE_SRC, SPARSE_COUNT, self._steps, self._moves,
                            self._phi, self._reward_kind, self._inst_depth, self._form == "onehot", self._gather,
                            obs.reshape(self.num_envs, -1))
            self._pending[:] = False
            return
        for i in np.flatnonzero(self._pending):  # same per-env generator, from Python
            inst = self.generator(int(self._depths[i]), self.metric, self._rngs[i])
            self.states[i] = inst.state
            self._inst_depth[i] = inst.depth
            self._steps[i] = self._moves[i] = 0
            self._phi[i] = _status(self._states64, i, self._reward_kind, self._vbmi)[1]
            obs[i] = self._encode(self.states[i])
        self._pending[:] = False

    def _encode(self, row: np.ndarray) -> np.ndarray:
        col = row // 9
        return np.eye(6, dtype=np.uint8)[col] if self._form == "onehot" else col[self._visible]

    def _obs_target(self) -> np.ndarray:
        """The buffer a reset or step writes (every row): a fresh one when returned with ``copy=True``.

        Writing the returned array directly saves copying the whole batch
        (21 MB of one-hot rows at 65,536 envs) on every step.
        """
        if self.copy and self._form != "image":
            return np.empty(self._obs.shape, dtype=np.uint8)
        return self._obs

    def _observation(self, obs: np.ndarray) -> np.ndarray:
        """What reset and step return for the batch ``obs`` written: it, or its images (with ``copy=False``
        painted into the same buffer every call)."""
        if self._form != "image":
            return obs
        if self.copy:
            return self._images(obs)
        if self._frames is None:
            self._frames = self._images(obs)
        else:
            self._images(obs, self._frames)
        return self._frames

    def _images(self, colours: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """The tier's images of a batch of shown-sticker colours, painted in one Numba call from the renderer's
        template (``out``: into that buffer, which holds painted images already: only the stickers change)."""
        canvas, size = self._canvas, self.image_size
        assert canvas is not None and self._runs is not None and self._pattern is not None  # the image form's
        fresh = out is None
        if out is None:
            out = np.empty((len(colours), size, size, 3), dtype=np.uint8)
        _paint_batch(colours, canvas.template.reshape(-1), self._runs, self._pattern, out.reshape(-1),
                     size * size * 3, fresh)
        return out

    def _info(self, mask: np.ndarray | None) -> dict[str, Any]:
        values = {"depth": self._inst_depth, "steps": self._steps, "moves": self._moves,
                  "is_success": self.solved()}
        if self._dense and self._phi_public:
            values["phi"] = self._phi
        return self._masked(values, mask)

    def _masked(self, values: dict[str, np.ndarray], mask: np.ndarray | None) -> dict[str, Any]:
        """Gymnasium's vector ``info`` layout: each key with its ``_key`` mask (``None``: every sub-env)."""
        info: dict[str, Any] = {}
        if mask is None:
            mask = np.ones(self.num_envs, dtype=np.bool_)
            values = {key: value.copy() for key, value in values.items()}
        else:
            values = {key: np.where(mask, value, np.zeros_like(value)) for key, value in values.items()}
        for key, value in values.items():
            info[key], info["_" + key] = value, mask.copy()
        if self._dense:
            info["reward_kind"] = np.where(mask, self.reward, np.array(None, dtype=object)).astype(object)
            info["_reward_kind"] = mask.copy()
        return info

    def _final_info(self) -> dict[str, Any]:
        """``final_obs`` / ``final_info`` of the sub-envs that ended (and were reset) in SAME_STEP mode."""
        m = self._final_mask.copy()
        final_obs = np.full(self.num_envs, None, dtype=object)
        frames = self._images(self._final_obs[m]) if self._form == "image" else self._final_obs[m]
        for k, i in enumerate(np.flatnonzero(m)):
            final_obs[i] = frames[k].copy()
        values = {"depth": self._final_stats[:, 2], "steps": self._final_stats[:, 0],
                  "moves": self._final_stats[:, 1], "is_success": self._terms.copy()}
        if self._dense and self._phi_public:
            values["phi"] = self._final_phi
        return {"final_obs": final_obs, "_final_obs": m, "final_info": self._masked(values, m),
                "_final_info": m.copy()}
