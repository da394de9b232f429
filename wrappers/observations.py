"""Observation wrappers: the four CubeBench tiers as functions O(s) of one state.

Each wrapper takes the core :class:`~cubebench.CubeEnv` observation (the 54
colour indices of the held cube, URFDLB order; reward wrappers may sit in
between) and turns it into what the agent of that tier sees:

=====================  ====  ===============================================  ========================
wrapper                tier  array forms (default first)                      ``form="text"``
=====================  ====  ===============================================  ========================
SymbolicObservation    1     ``onehot`` (54, 6), ``indices`` (54,) uint8       the 54-character string
NetObservation         2     ``image``: the cross net, RGB                     labelled letter net
FaceViewObservation    3a    ``image``: the held cube's F face, RGB;           titled 3x3 grid
                             ``indices``: its 9 colour indices (9,) uint8
VertexViewObservation  3b    ``image``: U, F, R seen from the UFR corner,      three titled 3x3 grids
                             RGB; ``indices``: U, R, F's 27 colour indices
=====================  ====  ===============================================  ========================

The partial tiers' ``indices`` form is their compact form (for RL): the colour indices of exactly the
stickers the tier shows (:attr:`~cubebench.tiers.TierSpec.visible`, in facelet order), what the native vector
env batches (``gym.make_vec(..., obs_format="indices")``).

Tiers 2 and 3 also hide the ground truth: ``info`` keeps only
:data:`PUBLIC_INFO_KEYS` (no facelet string, scramble, distance or reward
potential, all of which reveal the state) unless ``debug=True``.  Runners and
tests read the truth from ``env.unwrapped`` (``state``, ``facelets``).

``render()`` of a partial tier (Face, Vertex) in ``rgb_array`` mode shows what the agent sees: the tier's own
image of the held cube at ``image_size``, whatever the observation form; ``render_view="net"`` shows the whole
net instead (the core env's render, for people watching, as ``ansi`` and the ``human`` window always do: the
core draws that window itself on every step).  Symbolic and Visual render the core's net, which is all they
show.  Each wrapper class says which of ``make_cube_env``'s tier options it reads
(:meth:`TierObservation.reads`), so an option a tier does not read is refused there, not ignored.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, ClassVar, SupportsFloat

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from cubebench.engine.facelets import CENTRES, COLOUR_LETTERS, FACES, N_STICKERS
from cubebench.tiers import PUBLIC_INFO_KEYS, TIER_SPECS, TierSpec

_ONE_HOT = np.eye(6, dtype=np.uint8)


_LETTERS = {"faces": FACES, "colours": COLOUR_LETTERS}
_FACE_CODES = np.frombuffer(FACES.encode("ascii"), dtype=np.uint8)
_COLOUR_CODES = np.frombuffer(COLOUR_LETTERS.encode("ascii"), dtype=np.uint8)


_INDICES_SHAPE = (N_STICKERS,)
_ONEHOT_SHAPE = (N_STICKERS, 6)


def _check_core_observation(env: gym.Env, shapes: tuple[tuple[int, ...], ...] = (_INDICES_SHAPE,)) -> tuple[int, ...]:
    """The shape of the core env's observation, which must be one of ``shapes``
    (the 54 colour indices, or for Tier 1 also their one-hot rows); refuse anything else."""
    space = env.observation_space
    if not (isinstance(space, spaces.Box) and space.shape in shapes):
        raise ValueError(
            "observation wrappers expect the core CubeEnv observation (Box of 54 colour indices"
            f"{' or their one-hot rows' if _ONEHOT_SHAPE in shapes else ''}), "
            f"got {space}; put the observation wrapper outermost"
        )
    return space.shape


def _check_form(form: str, allowed: tuple[str, ...]) -> str:
    if form not in allowed:
        raise ValueError(f"form must be one of {allowed}, got {form!r}")
    return form


class SymbolicObservation(gym.ObservationWrapper):
    """Tier 1: the full state, an MDP.

    ``form="onehot"``: (54, 6) uint8, row ``i`` one-hot in the colour at
    position ``i`` (for RL); ``"indices"``: (54,) uint8 colour indices;
    ``"text"``: the 54-character string.  ``letters="faces"`` writes each
    sticker as the face whose centre has its colour (Kociemba's ``URFDLB``
    string, accepted by a solver in any held orientation); ``"colours"``
    writes ``WRGYOB``.  ``info`` is passed on unchanged (nothing is hidden).

    A core env made with ``obs_format="onehot"`` already emits the one-hot
    form (what ``make_cube_env`` builds for the default form), and the core's
    own form is the indices one; for those the wrapper passes observations
    through untouched, saving a conversion per step.
    """

    tier = "symbolic"

    @classmethod
    def reads(cls, spec: TierSpec) -> tuple[str, ...]:
        """The tier options of ``make_cube_env`` this wrapper reads (besides ``obs_format``): the letters."""
        return ("letters",)

    @classmethod
    def build(cls, env: gym.Env, spec: TierSpec, options: "WrapperOptions") -> gym.ObservationWrapper:
        """The wrapper ``make_cube_env`` builds (the spec's ``wrapper``): the form and the letters are its options."""
        return cls(env, form=options.form, letters=options.letters)

    def __init__(self, env: gym.Env, form: str = "onehot", letters: str = "faces") -> None:
        super().__init__(env)
        self.tier_spec = TIER_SPECS[self.tier]
        core_shape = _check_core_observation(env, (_INDICES_SHAPE, _ONEHOT_SHAPE))
        self.form = _check_form(form, TIER_SPECS[self.tier].forms)
        if core_shape == _ONEHOT_SHAPE and form != "onehot":
            raise ValueError(f"a core env with one-hot observations serves only form='onehot', not {form!r}")
        # the core already emits this form, as a fresh array each step: nothing to convert or copy
        self._pass_through = core_shape == _ONEHOT_SHAPE or form == "indices"
        if letters not in _LETTERS:
            raise ValueError(f"letters must be 'faces' or 'colours', got {letters!r}")
        self.letters = letters
        if form != "text":
            self.observation_space = TIER_SPECS[self.tier].space(form)
        else:
            self.observation_space = spaces.Text(
                min_length=N_STICKERS, max_length=N_STICKERS, charset=_LETTERS[letters]
            )

    def observation(self, observation: np.ndarray) -> np.ndarray | str:
        col = np.asarray(observation, dtype=np.uint8)
        if self.form == "onehot":
            return col.copy() if col.shape == _ONEHOT_SHAPE else _ONE_HOT[col]
        if self.form == "indices":
            return col.copy()
        return self.text(col)

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        if self._pass_through:
            return self.env.reset(seed=seed, options=options)
        return super().reset(seed=seed, options=options)

    def step(self, action: Any) -> tuple[Any, SupportsFloat, bool, bool, dict[str, Any]]:
        if self._pass_through:
            return self.env.step(action)
        return super().step(action)

    def text(self, colours: np.ndarray) -> str:
        """The 54-character string of 54 colour indices in this wrapper's letters."""
        return colour_text(colours, self.letters)


def symbolic_colours(observation: Any) -> np.ndarray:
    """The 54 colour indices a Symbolic observation shows: the inverse of :class:`SymbolicObservation`.

    One-hot rows and colour indices give the colours themselves; a text form
    gives, for each sticker, the held position of the centre with the same
    letter (the colours up to a relabelling, which is all the letters say).
    Anything else raises ``ValueError``: it is not a Symbolic observation.
    """
    if isinstance(observation, str):
        letters = np.frombuffer(observation.encode("ascii", "replace"), dtype=np.uint8)
        if letters.shape == _INDICES_SHAPE:
            centre_of = {int(c): k for k, c in enumerate(letters[list(CENTRES)])}
            if len(centre_of) == 6 and all(int(c) in centre_of for c in letters):
                return np.array([centre_of[int(c)] for c in letters], dtype=np.uint8)
        raise ValueError(f"not a Symbolic text observation: {observation[:60]!r}")
    arr = np.asarray(observation)
    if arr.shape == _ONEHOT_SHAPE and np.all((arr == 0) | (arr == 1)) and np.all(arr.sum(axis=1) == 1):
        return arr.argmax(axis=1).astype(np.uint8)
    if arr.shape == _INDICES_SHAPE and np.issubdtype(arr.dtype, np.integer) and arr.min() >= 0 and arr.max() <= 5:
        return arr.astype(np.uint8)
    raise ValueError(f"not a Symbolic observation: an array of shape {arr.shape} and dtype {arr.dtype}")


def colour_text(colours: np.ndarray, letters: str = "faces") -> str:
    """54 colour indices of a held cube as its 54-character string.

    ``letters="faces"`` names each sticker by the face whose centre has its
    colour (Kociemba's ``URFDLB`` string); ``"colours"`` writes ``WRGYOB``.
    """
    if letters not in _LETTERS:
        raise ValueError(f"letters must be 'faces' or 'colours', got {letters!r}")
    if letters == "colours":
        return _COLOUR_CODES[colours].tobytes().decode("ascii")
    face_of_colour = np.empty(6, dtype=np.uint8)
    face_of_colour[colours[list(CENTRES)]] = np.arange(6)
    return _FACE_CODES[face_of_colour[colours]].tobytes().decode("ascii")


@dataclass(frozen=True)
class WrapperOptions:
    """What ``make_cube_env`` was asked about the observation; each wrapper class takes the options it has."""

    form: str
    size: int = 224
    debug: bool = False
    renderer: str = "painter"
    letters: str = "faces"
    render_view: str = "agent"


RENDER_VIEWS = ("agent", "net")
"""What ``render()`` of a partial tier shows: the agent's view (default) or the whole net."""


class TierObservation(gym.ObservationWrapper):
    """A tier of :data:`cubebench.tiers.TIER_SPECS` that shows an image or a text and hides the state:
    the spec's image or text function of the held colours, and ``info`` stripped of ground truth.

    Tiers 2-3 are its subclasses; a new tier needs no subclass (``make_cube_env`` wraps it in this class).
    """

    tier = ""
    """The tier's name (``visual``, ``face``, ``vertex``), as the ids and the runner spell it."""

    OPTIONS: ClassVar[tuple[str, ...]] = ()
    """Options of its own a subclass reads (``make_cube_env`` names), besides :meth:`reads`' shared ones."""

    @classmethod
    def reads(cls, spec: TierSpec) -> tuple[str, ...]:
        """The tier options of ``make_cube_env`` this wrapper reads for ``spec`` (besides ``obs_format``):
        ``image_size`` and ``debug``, ``render_view`` on a partial tier, and a subclass's :attr:`OPTIONS`."""
        return ("image_size", "debug", *(("render_view",) if spec.partial else ()), *cls.OPTIONS)

    @classmethod
    def build(cls, env: gym.Env, spec: TierSpec, options: WrapperOptions) -> gym.ObservationWrapper:
        """The wrapper ``make_cube_env`` builds for ``spec`` (whose ``wrapper`` names this class): form, size,
        ``debug`` and ``render_view`` are its options; a subclass of one tier takes its own options too."""
        if cls.tier:
            return cls(env, form=options.form, size=options.size, debug=options.debug,  # type: ignore[call-arg]
                       render_view=options.render_view)
        return cls(env, spec, form=options.form, size=options.size, debug=options.debug,
                   render_view=options.render_view)

    def __init__(
        self,
        env: gym.Env,
        spec: TierSpec,
        form: str,
        size: int,
        debug: bool,
        image: Callable[[np.ndarray, int], np.ndarray] | None = None,
        render_view: str = "agent",
    ) -> None:
        super().__init__(env)
        _check_core_observation(env)
        self.tier, self.tier_spec = spec.name, spec
        self.needs_view_actions = spec.partial
        """A partial tier must be able to turn the cube to see the rest of it."""
        if self.needs_view_actions and not getattr(env.unwrapped, "view_actions", False):
            raise ValueError(
                f"{type(self).__name__} shows part of the cube, so its agent needs the view actions "
                "x x' y y' z z': build the core env with CubeEnv(view_actions=True) (make_cube_env does)"
            )
        self.form = _check_form(form, spec.forms)
        self.size = int(size)
        self.debug = bool(debug)
        self._image, self._text = image or spec.image, spec.text
        self._visible = np.array(spec.visible, dtype=np.intp)  # what the indices form shows
        self.observation_space = spec.space(self.form, self.size)
        if render_view not in RENDER_VIEWS:
            raise ValueError(f"render_view must be one of {RENDER_VIEWS}, got {render_view!r}")
        self.render_view = render_view
        """``agent``: a partial tier's ``render()`` draws the agent's view; ``net``: the core's whole net."""

    def observation(self, observation: np.ndarray) -> np.ndarray | str:
        col = np.asarray(observation, dtype=np.uint8)
        if self.form == "indices":
            return col[self._visible]  # a new array of the shown stickers' colours, nothing else
        return self._image(col, self.size) if self.form == "image" else self._text(col)

    def render(self) -> Any:
        """``rgb_array`` on a partial tier with ``render_view="agent"``: the tier's own image of the held cube at
        :attr:`size` (the image form's observation, whatever the form); otherwise the core env's render (the
        whole net: ``ansi``, ``human``, whose window the core draws on every step, and ``render_view="net"``)."""
        if self.needs_view_actions and self.render_view == "agent" and self.env.render_mode == "rgb_array":
            held = getattr(self.env.unwrapped, "state")  # the core CubeEnv's held sticker ids
            return self._image((held // 9).astype(np.uint8), self.size)
        return self.env.render()

    @property
    def hides_state(self) -> bool:
        """Whether ``info`` is stripped to :data:`PUBLIC_INFO_KEYS` (the tier hides the state, and not ``debug``)."""
        return self.tier_spec.hides_state and not self.debug

    def public_info(self, info: dict[str, Any]) -> dict[str, Any]:
        """``info`` as the agent may see it: :data:`PUBLIC_INFO_KEYS` only, unless ``debug``."""
        if not self.hides_state:
            return info
        return {k: v for k, v in info.items() if k in PUBLIC_INFO_KEYS}

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        obs, info = self.env.reset(seed=seed, options=options)
        return self.observation(obs), self.public_info(info)

    def step(self, action: Any) -> tuple[Any, SupportsFloat, bool, bool, dict[str, Any]]:
        obs, reward, terminated, truncated, info = self.env.step(action)
        return self.observation(obs), reward, terminated, truncated, self.public_info(info)


class NetObservation(TierObservation):
    """Tier 2: the unfolded cross net as an RGB image (``size`` square), or as a
    labelled letter grid (``form="text"``).  The agent must fold it mentally."""

    tier = "visual"

    def __init__(self, env: gym.Env, form: str = "image", size: int = 224, debug: bool = False,
                 render_view: str = "agent") -> None:
        super().__init__(env, TIER_SPECS[self.tier], form, size, debug, render_view=render_view)


class FaceViewObservation(TierObservation):
    """Tier 3a: only the F face of the held cube, as an image, a 3x3 letter grid or its 9 colour indices.

    The renderers are given the nine F-face colours and nothing else, so no
    other sticker can reach the observation; view actions (``x y z``) bring
    other faces to the front.  The core env must offer them
    (``CubeEnv(view_actions=True)``, as ``gym.make`` builds it): a rotation
    changes the held state that the core steps, so they live there.
    """

    tier = "face"

    def __init__(self, env: gym.Env, form: str = "image", size: int = 224, debug: bool = False,
                 render_view: str = "agent") -> None:
        super().__init__(env, TIER_SPECS[self.tier], form, size, debug, render_view=render_view)


class VertexViewObservation(TierObservation):
    """Tier 3b: the U, F and R faces of the held cube seen from the UFR corner.

    ``renderer="painter"`` (default) projects the sticker quads with
    numpy/Pillow and works everywhere; ``renderer="pyrender"`` draws cubie
    meshes with OpenGL (offscreen, EGL; needs the ``render3d`` extra, see
    :mod:`cubebench.render.vertex_gl` for the environment variables).  Both
    use the same camera and give the same sticker colours at the same pixels.
    ``form="text"`` gives three titled 3x3 grids instead, ``form="indices"`` the 27 colour indices of
    U, R and F (facelet order).  Like the Face View
    it needs a core env with the view actions.
    """

    tier = "vertex"

    RENDERERS = ("painter", "pyrender")
    OPTIONS = ("renderer",)

    @classmethod
    def build(cls, env: gym.Env, spec: TierSpec, options: WrapperOptions) -> gym.ObservationWrapper:
        """The Vertex tier's wrapper with the renderer asked for."""
        return cls(env, form=options.form, size=options.size, renderer=options.renderer, debug=options.debug,
                   render_view=options.render_view)

    def __init__(
        self,
        env: gym.Env,
        form: str = "image",
        size: int = 224,
        renderer: str = "painter",
        debug: bool = False,
        render_view: str = "agent",
    ) -> None:
        if renderer not in self.RENDERERS:
            raise ValueError(f"renderer must be one of {self.RENDERERS}, got {renderer!r}")
        self.renderer = renderer
        super().__init__(env, TIER_SPECS[self.tier], form, size, debug, image=_vertex_renderer(renderer),
                         render_view=render_view)


def _vertex_renderer(name: str) -> Callable[[np.ndarray, int], np.ndarray]:
    """The vertex image function; pyrender is imported only when asked for."""
    if name == "painter":
        return TIER_SPECS["vertex"].image
    from cubebench.render.vertex_gl import ensure_renderer, render_vertex_gl

    ensure_renderer()
    return render_vertex_gl


TIER_OBSERVATIONS = (SymbolicObservation, TierObservation)
"""The observation wrapper classes that make a tier (each instance names its tier in ``.tier`` and holds its
``.tier_spec``): a tier's spec names one of them or a subclass (:attr:`~cubebench.tiers.TierSpec.wrapper`)."""


__all__ = [
    "SymbolicObservation", "NetObservation", "FaceViewObservation", "VertexViewObservation",
    "TierObservation", "TIER_OBSERVATIONS", "WrapperOptions", "PUBLIC_INFO_KEYS", "RENDER_VIEWS", "colour_text",
]
