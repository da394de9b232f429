"""The four observation tiers: pixel readback, view actions, hidden state, determinism.

The readback tests locate stickers without asking the renderers where they
drew them: the net and face layouts are measured on the solved cube's image
(each face is one colour there), the vertex view's sticker centres are the
engine's 3D sticker geometry projected through the documented camera, and the
two vertex renderers (one rasterising real 3D meshes) must agree.  Colours
are then read from the pixels of random states in all 24 held orientations
and compared with the engine's state.
"""

from __future__ import annotations

import gc

import importlib.util
import itertools
import os
import subprocess
import sys
import warnings
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from helpers import SCRAMBLES
from gymnasium.utils.env_checker import check_env

import cubebench  # noqa: F401  (registers the ids)
from cubebench import CubeEnv
from cubebench.engine import COLOUR_LETTERS, COLOUR_RGB, FACES, ORIENTATION_NAMES, ORIENTATIONS, TABLE, MOVE_INDEX
from cubebench.engine import kernels
from cubebench.engine.facelets import sticker_geometry
from cubebench.render.camera import FACE_SHADE, VERTEX_CAMERA
from cubebench.render.canvas import BACKGROUND
from cubebench.render.face import render_face
from cubebench.render.net import render_net
from cubebench.render.vertex import render_vertex
from cubebench.wrappers.observations import (
    FaceViewObservation, NetObservation, SymbolicObservation, VertexViewObservation,
)
from cubebench.wrappers.reward_wrappers import make_reward_wrapper


def _pyrender_or_reason() -> str | None:
    """None when pyrender and trimesh are installed, else why the 3D cases skip.

    Nothing is imported here: the GL context is made by the first pyrender
    test, not at collection, and an installed but broken pyrender fails them.
    """
    missing = [m for m in ("pyrender", "trimesh") if importlib.util.find_spec(m) is None]
    return f"{' and '.join(missing)} not installed; install the render3d extra" if missing else None


_NO_PYRENDER = _pyrender_or_reason()
RENDERERS = ["painter", pytest.param("pyrender", marks=pytest.mark.skipif(bool(_NO_PYRENDER), reason=str(_NO_PYRENDER)))]
AGENT_INFO = {"depth", "steps", "moves", "is_success", "reward_kind"}
"""What the docs promise the agent of Tiers 2-3 may see in ``info``."""
IDS = ["CubeBench-Symbolic-v0", "CubeBench-Visual-v0", "CubeBench-Face-v0", "CubeBench-Vertex-v0"]
MAGENTA = np.array([255, 0, 255], dtype=np.uint8)
MARKERS = np.array([[1, 2, 3], [4, 5, 6], [7, 8, 9], [10, 11, 12], [13, 14, 15], [16, 17, 18]], dtype=np.uint8)
"""Colours no renderer uses for anything else, to find where each face's stickers are drawn."""


# --- helpers ----------------------------------------------------------------
def view_env(wrapper: Any, **kwargs: Any) -> gym.Env:
    """A tier wrapper over a core env that has the view actions (to reach all 24 orientations)."""
    return wrapper(CubeEnv(depth=25, view_actions=True, max_steps=None, generator=SCRAMBLES), **kwargs)


def act(env: gym.Env, names: str) -> Any:
    """Step the actions named in ``names`` ("x2" = "x x"); return the last observation."""
    obs = None
    for name in names.split():
        for _ in range(2 if name.endswith("2") else 1):
            obs = env.step(env.unwrapped.action_names.index(name.rstrip("2")))[0]
    return obs


def held_colours(env: gym.Env) -> np.ndarray:
    return env.unwrapped.state // 9


def classify(pixels: np.ndarray, candidates: np.ndarray, tol: float = 4.0) -> np.ndarray:
    """Index of the nearest candidate colour of each pixel; fails if none is within ``tol``."""
    dist = np.linalg.norm(pixels[:, None, :].astype(float) - candidates[None].astype(float), axis=2)
    assert dist.min(axis=1).max() <= tol, f"pixel colours {pixels[dist.min(axis=1) > tol]} match no sticker colour"
    return dist.argmin(axis=1)


def sample(img: np.ndarray, xy: np.ndarray) -> np.ndarray:
    ij = np.floor(xy).astype(int)
    return img[ij[:, 1], ij[:, 0]]


def face_boxes(img: np.ndarray, palette: np.ndarray = COLOUR_RGB) -> dict[int, tuple[int, int, int, int]]:
    """Bounding box (x0, y0, x1, y1) of each palette colour present in a solved-cube image."""
    boxes = {}
    for c, rgb in enumerate(palette):
        ys, xs = np.nonzero((img == rgb).all(axis=2))
        if len(xs):
            boxes[c] = (xs.min(), ys.min(), xs.max() + 1, ys.max() + 1)
    return boxes


def grid_centres(box: tuple[int, int, int, int]) -> np.ndarray:
    """Centres of the 3x3 cells of a face box, row-major."""
    x0, y0, x1, y1 = box
    return np.array([(x0 + (k % 3 + 0.5) * (x1 - x0) / 3, y0 + (k // 3 + 0.5) * (y1 - y0) / 3) for k in range(9)])


def net_centres(size: int) -> np.ndarray:
    """Pixel centres of the 54 net stickers, measured on the solved net (no renderer internals)."""
    img = render_net(np.arange(54) // 9, size, MARKERS)
    boxes = face_boxes(img, MARKERS)
    (ux, uy, _, _), (fx, fy, _, _) = boxes[0], boxes[2]
    assert set(boxes) == set(range(6))
    assert ux == fx == boxes[3][0] and uy < fy < boxes[3][1], "U above F above D, in one column"
    assert boxes[4][0] < fx < boxes[1][0] < boxes[5][0], "L, F, R, B from left to right"
    assert boxes[4][1] == fy == boxes[1][1] == boxes[5][1], "L, F, R, B in one row"
    return np.concatenate([grid_centres(boxes[f]) for f in range(6)])


def face_centres(size: int = 224) -> np.ndarray:
    """Pixel centres of the face view's 9 stickers, measured on a one-colour face."""
    boxes = face_boxes(render_face(np.full(9, 2), size, MARKERS), MARKERS)
    assert set(boxes) == {2}
    return grid_centres(boxes[2])


def vertex_centres(size: int) -> np.ndarray:
    """Pixel centres of the U, R, F stickers: the engine's 3D sticker centres through the camera."""
    pos, nrm = sticker_geometry()
    return VERTEX_CAMERA.project((pos + 0.5 * nrm)[:27], size)


def vertex_candidates(position: int) -> np.ndarray:
    return np.rint(COLOUR_RGB * FACE_SHADE[FACES[position // 9]])


def read_vertex(img: np.ndarray, size: int) -> np.ndarray:
    px = sample(img, vertex_centres(size))
    return np.array([classify(px[k : k + 1], vertex_candidates(k))[0] for k in range(27)])


def orientation_walks() -> list[tuple[int, str]]:
    return list(enumerate(ORIENTATION_NAMES))


def reach(env: gym.Env, seed: int, walk: str) -> tuple[Any, np.ndarray]:
    """Reset to a random state, then turn it to the orientation ``walk`` names with view actions.

    Returns the last observation and the state at reset.
    """
    obs, _ = env.reset(seed=seed)
    start = env.unwrapped.state.copy()
    return (act(env, walk) if walk else obs), start


# --- pixel and text readback, every tier, all 24 orientations ----------------
SEEDS = (11, 12)


@pytest.mark.parametrize("k,walk", orientation_walks())
def test_symbolic_readback_all_orientations(k: int, walk: str) -> None:
    for form, letters in (("onehot", "faces"), ("indices", "faces"), ("text", "colours"), ("text", "faces")):
        env = view_env(SymbolicObservation, form=form, letters=letters)
        for seed in SEEDS:
            obs, start = reach(env, seed, walk)
            assert np.array_equal(env.unwrapped.state, start[ORIENTATIONS[k]])
            truth = held_colours(env)
            if form == "onehot":
                assert obs.shape == (54, 6) and (obs.sum(axis=1) == 1).all()
                assert np.array_equal(obs.argmax(axis=1), truth)
            elif form == "indices":
                assert np.array_equal(obs, truth)
            elif letters == "colours":
                assert obs == "".join(COLOUR_LETTERS[c] for c in truth)
            else:  # letters name the face whose centre has the colour
                centre_face = {truth[9 * f + 4]: FACES[f] for f in range(6)}
                assert obs == "".join(centre_face[c] for c in truth)


@pytest.mark.parametrize("size", [224, 96])
@pytest.mark.parametrize("k,walk", orientation_walks())
def test_net_image_readback_all_orientations(k: int, walk: str, size: int) -> None:
    centres = net_centres(size)
    env = view_env(NetObservation, size=size)
    for seed in SEEDS:
        obs, start = reach(env, seed, walk)
        assert obs.shape == (size, size, 3) and obs.dtype == np.uint8
        assert np.array_equal(env.unwrapped.state, start[ORIENTATIONS[k]])
        assert np.array_equal(classify(sample(obs, centres), COLOUR_RGB, tol=0), held_colours(env))


@pytest.mark.parametrize("k,walk", orientation_walks())
def test_face_image_readback_all_orientations(k: int, walk: str) -> None:
    env = view_env(FaceViewObservation)
    centres = face_centres()
    for seed in SEEDS:
        obs, start = reach(env, seed, walk)
        assert np.array_equal(env.unwrapped.state, start[ORIENTATIONS[k]])
        assert np.array_equal(classify(sample(obs, centres), COLOUR_RGB, tol=0), held_colours(env)[18:27])


@pytest.mark.parametrize("renderer", RENDERERS)
@pytest.mark.parametrize("k,walk", orientation_walks())
def test_vertex_image_readback_all_orientations(k: int, walk: str, renderer: str) -> None:
    env = view_env(VertexViewObservation, renderer=renderer)
    for seed in SEEDS:
        obs, start = reach(env, seed, walk)
        assert np.array_equal(env.unwrapped.state, start[ORIENTATIONS[k]])
        assert np.array_equal(read_vertex(obs, 224), held_colours(env)[:27])


@pytest.mark.parametrize("k,walk", orientation_walks())
def test_text_forms_readback_all_orientations(k: int, walk: str) -> None:
    envs = {w: view_env(w, form="text") for w in (NetObservation, FaceViewObservation, VertexViewObservation)}
    for seed in SEEDS:
        for wrapper, env in envs.items():
            obs, _ = reach(env, seed, walk)
            truth = "".join(COLOUR_LETTERS[c] for c in held_colours(env))
            assert env.observation_space.contains(obs)
            if wrapper is NetObservation:
                assert parse_net_text(obs) == truth
            elif wrapper is FaceViewObservation:
                assert parse_grids(obs, ["Front"]) == truth[18:27]
            else:
                assert parse_grids(obs, ["Up", "Front", "Right"]) == truth[0:9] + truth[18:27] + truth[9:18]


def parse_grids(text: str, titles: list[str]) -> str:
    """Letters of titled 3x3 grids, in the order of ``titles`` (each title line starts with its name)."""
    lines = text.split("\n")
    assert len(lines) == 4 * len(titles)
    out = ""
    for g, title in enumerate(titles):
        assert lines[4 * g].startswith(title + " face") and "touches" in lines[4 * g]
        out += "".join(lines[4 * g + 1 + r].replace(" ", "") for r in range(3))
    return out


def parse_net_text(text: str) -> str:
    """The 54 letters of the text net in URFDLB order, faces found by their labels."""
    lines = text.split("\n")
    assert len(lines) == 12
    names = {"Up": "U", "Right": "R", "Front": "F", "Down": "D", "Left": "L", "Back": "B"}
    faces = {}
    for band in range(3):
        label_line = lines[4 * band]
        for name, letter in names.items():
            col = label_line.find(name)
            if col >= 0 and (col == 0 or label_line[col - 1] == " "):
                faces[letter] = "".join(lines[4 * band + 1 + r][col : col + 5].replace(" ", "") for r in range(3))
    return "".join(faces[f] for f in FACES)


# --- geometry of the pictures --------------------------------------------------
def test_vertex_camera_sees_u_on_top_f_left_r_right() -> None:
    centres = vertex_centres(224)
    u, r, f = centres[4], centres[13], centres[22]
    assert u[1] < f[1] and u[1] < r[1] and f[0] < u[0] < r[0]
    solved = render_vertex(np.arange(54) // 9)
    (uy, ux), (ry, rx), (fy, fx) = (
        np.argwhere((solved == vertex_candidates(9 * c)[c]).all(axis=2)).mean(axis=0) for c in (0, 1, 2)
    )
    assert uy < fy and uy < ry and fx < ux < rx, "the picture has U on top, F lower left, R lower right"
    assert abs(fy - ry) < 1 and abs((fx + rx) / 2 - ux) < 1, "seen along the UFR diagonal: symmetric"


def test_net_labels_above_faces_and_nothing_else_drawn() -> None:
    size = 224
    img = render_net(np.arange(54) // 9, size, MARKERS)
    boxes = face_boxes(img, MARKERS)
    drawn = np.zeros(img.shape[:2], bool)
    band = boxes[2][1] - boxes[0][3]  # between the bottom of U and the top of F
    for x0, y0, x1, y1 in boxes.values():
        drawn[y0 - 3 : y1 + 3, x0 - 3 : x1 + 3] = True  # the face with its dark border
        label = img[y0 - band : y0, x0:x1]
        assert ((label > 200).all(axis=2)).sum() > 10, "a white label above every face"
        drawn[y0 - band : y0, x0:x1] = True
    assert (img[~drawn] == BACKGROUND).all(), "only faces and their labels on the grey background"


@pytest.mark.parametrize("renderer", RENDERERS)
def test_vertex_view_never_shows_d_l_b(renderer: str, rng: np.random.Generator) -> None:
    render = _vertex_function(renderer)
    palette = np.vstack([COLOUR_RGB, MAGENTA])
    for _ in range(3):
        col = np.arange(54) // 9
        col = col[rng.permutation(54)]
        marked = col.copy()
        marked[27:] = 6
        img = render(marked, 224, palette)
        hidden = (np.abs(img.astype(int) - MAGENTA).max(axis=2) < 60).sum()
        assert hidden == 0, f"{hidden} pixels show D, L or B stickers"
        assert np.array_equal(img, render(col, 224, COLOUR_RGB)), "D, L, B colours change nothing"
        assert np.array_equal(read_vertex(img, 224), col[:27])


def test_face_view_shows_only_f() -> None:
    env = view_env(FaceViewObservation)
    env.reset(seed=3)
    before = env.observation(held_colours(env))
    for move in ("B", "B", "U", "U'"):  # B turns touch no F sticker; U and U' cancel
        state = env.unwrapped.state.copy()
        obs = act(env, move)
        assert not np.array_equal(env.unwrapped.state, state), "the move changed the cube"
        if move == "B" or move == "U'":
            assert np.array_equal(obs, before), "but not the front face, so not the observation"
    assert not np.array_equal(act(env, "R"), before), "R does change the front face"


def _vertex_function(renderer: str) -> Any:
    if renderer == "painter":
        return render_vertex
    from cubebench.render.vertex_gl import render_vertex_gl

    return render_vertex_gl


@pytest.mark.parametrize("size", [64, 160, 320])
@pytest.mark.parametrize("renderer", RENDERERS)
def test_vertex_renderers_agree_at_other_sizes(size: int, renderer: str, rng: np.random.Generator) -> None:
    col = (np.arange(54) // 9)[rng.permutation(54)]
    img = _vertex_function(renderer)(col, size, COLOUR_RGB)
    assert img.shape == (size, size, 3)
    assert np.array_equal(read_vertex(img, size), col[:27])


# --- view actions ------------------------------------------------------------
def test_view_actions_form_the_rotation_group() -> None:
    env = view_env(VertexViewObservation)
    env.reset(seed=5)
    start, first = env.unwrapped.state.copy(), env.observation(held_colours(env))
    for g in ("x", "y", "z"):
        act(env, " ".join([g] * 4))
        assert np.array_equal(env.unwrapped.state, start), f"{g} four times is the identity"
        obs = act(env, f"{g} {g}'")
        assert np.array_equal(obs, first), f"{g}' undoes {g}"
    obs = act(env, "x y x' y'")
    assert not np.array_equal(env.unwrapped.state, start) and not np.array_equal(obs, first)
    assert env.unwrapped.moves == 0, "rotations are not moves"


def test_view_actions_reach_24_distinct_views() -> None:
    env = view_env(VertexViewObservation)
    views = set()
    for _, walk in orientation_walks():
        obs, _ = env.reset(options={"state": "".join(f * 9 for f in FACES)})
        obs = act(env, walk) if walk else obs
        assert env.unwrapped.is_solved, "rotations never unsolve the cube"
        views.add(obs.tobytes())
    assert len(views) == 24


def test_face_turn_after_y_acts_on_the_face_now_on_the_right() -> None:
    env = view_env(VertexViewObservation)
    env.reset(seed=9)
    start = env.unwrapped.state.copy()
    act(env, "y R y'")  # R of the cube held after y is the original B face
    assert np.array_equal(env.unwrapped.state, start[TABLE[MOVE_INDEX["B"]]])
    assert not np.array_equal(env.unwrapped.state, start[TABLE[MOVE_INDEX["R"]]])


def test_global_move_frame_keeps_turns_on_the_original_faces() -> None:
    env = VertexViewObservation(CubeEnv(view_actions=True, move_frame="global", max_steps=None))
    env.reset(seed=9)
    start = env.unwrapped.state.copy()
    act(env, "y R y'")
    assert np.array_equal(env.unwrapped.state, start[TABLE[MOVE_INDEX["R"]]])


def test_face_view_after_y_shows_what_was_the_r_face() -> None:
    env = view_env(FaceViewObservation)
    env.reset(seed=21)
    centres = face_centres()
    old_right = held_colours(env)[9:18].copy()
    obs = act(env, "y")
    assert np.array_equal(classify(sample(obs, centres), COLOUR_RGB, tol=0), old_right)


# --- hidden state, determinism, API -------------------------------------------
@pytest.fixture
def fake_solver(monkeypatch: pytest.MonkeyPatch) -> None:
    """The oracle reward without the solver's tables: exact on even steps, the bound on odd ones."""
    import cubebench.solver.optimal as optimal

    calls = itertools.count()

    def distance(state: Any, metric: str, time_limit: float | None = None) -> int:
        if next(calls) % 2:
            raise optimal.SolverTimeout("budget spent", lower_bound=1, nodes=0, seconds=0.5)
        return 54 - int(kernels.stickers_in_place(state))

    monkeypatch.setattr(optimal, "optimal_distance", distance)
    monkeypatch.setattr(optimal, "lower_bound", lambda state, metric: 1)


def _infos_of(env: gym.Env, options: dict[str, Any] | None) -> list[dict[str, Any]]:
    _, info = env.reset(seed=4, options=options)
    return [info] + [env.step(a)[4] for a in (0, 3, 7)]


@pytest.mark.parametrize("env_id", IDS[1:])
@pytest.mark.parametrize("reward", ["none", "sticker", "face", "heuristic", "oracle"])
@pytest.mark.parametrize("options", [None, {"depth": 3}, {"scramble": "R U F' L2"}], ids=["seeded", "depth", "scramble"])
@pytest.mark.usefixtures("fake_solver")
def test_partial_tiers_hide_the_state_in_info(env_id: str, reward: str, options: dict[str, Any] | None) -> None:
    for outside in (False, True):  # the reward wrapper beneath the tier (as gym.make builds it) or on top

        def build(debug: bool) -> gym.Env:
            if outside:
                return make_reward_wrapper(gym.make(env_id, depth=6, debug=debug, generator=SCRAMBLES), reward)
            return gym.make(env_id, depth=6, reward=reward, debug=debug, generator=SCRAMBLES)

        env = build(debug=False)
        infos = _infos_of(env, options)
        truth = {env.unwrapped.facelets, env.unwrapped.instance.scramble}
        for info in infos:
            assert not {"facelets", "scramble", "distance", "phi", "phi_source"} & set(info)
            assert set(info) <= AGENT_INFO, f"unexpected info keys {set(info) - AGENT_INFO}"
            assert not truth & {v for v in info.values() if isinstance(v, str)}
        debug_env = build(debug=True)
        info = _infos_of(debug_env, options)[-1]
        assert info["facelets"] == debug_env.unwrapped.facelets and "scramble" in info
        assert reward == "none" or "phi" in info
        assert (reward == "oracle") == ("phi_source" in info)


def test_view_tiers_refuse_a_core_without_view_actions() -> None:
    """Tier 3 shows part of the cube: without x y z its agent could never see the rest."""
    for tier in (FaceViewObservation, VertexViewObservation):
        with pytest.raises(ValueError, match="view_actions=True"):
            tier(CubeEnv())
        assert tier(CubeEnv(view_actions=True)).action_space.n == 12 + 6


@pytest.mark.parametrize("reward", ["none", "sticker"])
def test_symbolic_default_form_comes_from_the_core(reward: str) -> None:
    """``make_cube_env`` has the core emit the one-hot rows; that must equal converting its indices."""
    made = cubebench.make_cube_env("symbolic", depth=8, reward=reward, generator=SCRAMBLES)
    assert made.unwrapped.obs_format == "onehot"
    converted = SymbolicObservation(cubebench.make_cube_env("symbolic", depth=8, reward=reward, generator=SCRAMBLES,
                                                           obs_format="indices").env)
    for env in (made, converted):
        env.action_space.seed(4)
    traces = []
    for env in (made, converted):
        obs, info = env.reset(seed=4)
        trace = [(obs, info)]
        for _ in range(30):
            trace.append(env.step(env.action_space.sample()))
        traces.append(trace)
    assert str(traces[0]) == str(traces[1])
    hot = made.unwrapped.step(0)[0]
    assert np.array_equal(made.observation(hot), hot) and made.observation(hot) is not hot
    with pytest.raises(ValueError, match="one-hot"):
        SymbolicObservation(CubeEnv(obs_format="onehot"), form="text")


def test_symbolic_tier_keeps_the_state_in_info() -> None:
    env = gym.make("CubeBench-Symbolic-v0", depth=3, generator=SCRAMBLES)
    _, info = env.reset(seed=1)
    assert info["facelets"] == env.unwrapped.facelets


@pytest.mark.parametrize(
    "env_id,kwargs",
    [(i, {}) for i in IDS]
    + [(i, {"obs_format": "text"}) for i in IDS]
    + [("CubeBench-Symbolic-v0", {"obs_format": "indices", "letters": "colours"}),
       ("CubeBench-Vertex-v0", {"renderer": "pyrender"}), ("CubeBench-Vertex-v0", {"image_size": 96})],
)
def test_check_env_every_id(env_id: str, kwargs: dict) -> None:
    if kwargs.get("renderer") == "pyrender" and _NO_PYRENDER:
        pytest.skip(_NO_PYRENDER)
    env = gym.make(env_id, **kwargs)
    gc.collect()  # what earlier tests left for the collector warns now, not inside check_env
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_env(env.unwrapped, skip_render_check=True)
        check_env(env, skip_render_check=True)
    other = [str(w.message) for w in caught if "different from the unwrapped" not in str(w.message)
             and not issubclass(w.category, ResourceWarning)]  # the collector's, about other tests' objects
    assert not other, f"check_env warned: {other}"
    obs, _ = env.reset(seed=0)
    assert env.observation_space.contains(obs)
    env.close()
    env.close()


@pytest.mark.parametrize("env_id, kwargs", [(IDS[1], {}), (IDS[2], {"render_view": "net"}),
                                            (IDS[3], {"render_view": "net"})])
def test_render_of_the_net_view_is_the_full_net_for_humans(env_id: str, kwargs: dict[str, Any]) -> None:
    env = gym.make(env_id, render_mode="rgb_array", **kwargs)
    check_env(env.unwrapped)
    env.reset(seed=2)
    frame = env.render()
    assert frame.ndim == 3 and np.array_equal(
        classify(sample(frame, net_centres(frame.shape[1])), COLOUR_RGB, tol=0), held_colours(env)
    )


@pytest.mark.parametrize("env_id,kwargs", [(i, {}) for i in IDS] + [("CubeBench-Vertex-v0", {"renderer": "pyrender"})])
def test_same_seed_same_images(env_id: str, kwargs: dict) -> None:
    if kwargs.get("renderer") == "pyrender" and _NO_PYRENDER:
        pytest.skip(_NO_PYRENDER)

    def episode(seed: int) -> list[bytes]:
        env = gym.make(env_id, depth=8, max_steps=None, generator=SCRAMBLES, **kwargs)
        obs, _ = env.reset(seed=seed)
        env.action_space.seed(seed)
        trace = [np.asarray(obs).tobytes()]
        for _ in range(6):
            trace.append(np.asarray(env.step(env.action_space.sample())[0]).tobytes())
        return trace

    assert episode(7) == episode(7)
    assert episode(7)[0] != episode(8)[0]


def test_painter_does_not_import_opengl() -> None:
    code = (
        "import sys, gymnasium as gym, cubebench\n"
        "env = gym.make('CubeBench-Vertex-v0'); env.reset(seed=0); env.step(0)\n"
        "assert not {'pyrender', 'OpenGL', 'trimesh'} & set(sys.modules), 'GL stack imported'\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=dict(os.environ))
    assert result.returncode == 0, result.stderr


_NEVER_DELETED: list[Any] = []


@pytest.mark.skipif(bool(_NO_PYRENDER), reason=str(_NO_PYRENDER))
def test_pyrender_renderer_coexists_with_another_gl_context(rng: np.random.Generator) -> None:
    from cubebench.render.vertex_gl import _import_pyrender, render_vertex_gl

    pyrender = _import_pyrender()
    render_vertex_gl(np.arange(54) // 9)  # ours exists and has uploaded its meshes
    other = pyrender.OffscreenRenderer(32, 32)  # someone else's context, made current last
    _NEVER_DELETED.append(other)  # its __del__ would terminate the EGL display every renderer shares
    scene = pyrender.Scene(bg_color=[0.0, 0.0, 1.0, 1.0])
    scene.add(pyrender.OrthographicCamera(xmag=1, ymag=1))
    assert (other.render(scene)[0] == [0, 0, 255]).all()
    for _ in range(3):
        col = (np.arange(54) // 9)[rng.permutation(54)]
        assert np.array_equal(read_vertex(render_vertex_gl(col, 224, COLOUR_RGB), 224), col[:27])
        assert (other.render(scene)[0] == [0, 0, 255]).all()


@pytest.mark.skipif(bool(_NO_PYRENDER), reason=str(_NO_PYRENDER))
def test_forked_process_gets_an_error_not_a_hang() -> None:
    from cubebench.render.vertex_gl import render_vertex_gl

    render_vertex_gl(np.arange(54) // 9)
    pid = os.fork()
    if pid == 0:  # child: must raise at once instead of hanging on the inherited EGL context
        try:
            render_vertex_gl(np.arange(54) // 9)
        except RuntimeError as exc:
            os._exit(7 if "spawn" in str(exc) else 8)
        os._exit(9)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 7


def test_missing_pyrender_names_the_extra() -> None:
    code = (
        "import sys; sys.modules['pyrender'] = None\n"
        "import gymnasium as gym, cubebench\n"
        "try:\n    gym.make('CubeBench-Vertex-v0', renderer='pyrender')\n"
        "except ImportError as exc:\n    assert 'pip install -e \".[render3d]\"' in str(exc), exc\n    sys.exit(0)\n"
        "sys.exit(3)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def test_bad_arguments_are_refused() -> None:
    with pytest.raises(ValueError, match="form"):
        NetObservation(CubeEnv(), form="png")
    with pytest.raises(ValueError, match="renderer"):
        VertexViewObservation(CubeEnv(), renderer="blender")
    with pytest.raises(ValueError, match="letters"):
        SymbolicObservation(CubeEnv(), letters="greek")
    with pytest.raises(ValueError, match="outermost"):
        FaceViewObservation(SymbolicObservation(CubeEnv()))


@pytest.mark.parametrize("env_id", IDS[2:])
@pytest.mark.parametrize("size", [224, 96])
def test_render_of_a_partial_tier_is_what_its_agent_sees_at_its_image_size(env_id: str, size: int) -> None:
    """Face and Vertex ``rgb_array`` renders are the tier's own image of the held cube (what the image form
    observes), at ``image_size``, after view actions too; the text form renders the same picture."""
    seen = gym.make(env_id, render_mode="rgb_array", image_size=size)
    told = gym.make(env_id, render_mode="rgb_array", image_size=size, obs_format="text")
    obs, _ = seen.reset(seed=3)
    told.reset(seed=3)
    for action in (None, seen.unwrapped.action_names.index("y"), 0, seen.unwrapped.action_names.index("x'")):
        if action is not None:
            obs = seen.step(action)[0]
            told.step(action)
        frame = seen.render()
        assert frame.shape == (size, size, 3) and np.array_equal(frame, obs)
        assert np.array_equal(told.render(), frame)


def test_render_view_is_checked() -> None:
    with pytest.raises(ValueError, match=r"render_view must be one of \('agent', 'net'\), got 'all'"):
        gym.make("CubeBench-Face-v0", render_view="all")


@pytest.mark.parametrize("env_id, option", [
    ("CubeBench-Face-v0", {"renderer": "bogus"}), ("CubeBench-Visual-v0", {"renderer": "pyrender"}),
    ("CubeBench-Face-v0", {"letters": "colours"}), ("CubeBench-Vertex-v0", {"letters": "faces2"}),
    ("CubeBench-Symbolic-v0", {"image_size": 64}), ("CubeBench-Symbolic-v0", {"debug": True}),
    ("CubeBench-Symbolic-v0", {"render_view": "net"}), ("CubeBench-Visual-v0", {"render_view": "agent2"}),
])
def test_an_option_the_tier_does_not_read_is_one_line(env_id: str, option: dict[str, Any]) -> None:
    [(name, value)] = option.items()
    with pytest.raises(ValueError) as refused:
        gym.make(env_id, **option)
    message = str(refused.value)
    assert "\n" not in message and message.startswith(f"{env_id} does not read {name}={value!r}: {name} is an option of ")


@pytest.mark.parametrize("env_id, option", [
    ("CubeBench-Symbolic-v0", {"letters": "colours", "obs_format": "text"}), ("CubeBench-Visual-v0", {"image_size": 96}),
    ("CubeBench-Face-v0", {"debug": True, "render_view": "net"}), ("CubeBench-Vertex-v0", {"renderer": "painter"}),
    ("CubeBench-Face-v0", {"renderer": "painter", "letters": "faces", "render_view": "agent"}),  # the defaults
    ("CubeBench-Symbolic-v0", {"image_size": 224, "debug": False}),
])
def test_the_options_a_tier_reads_and_the_defaults_are_accepted(env_id: str, option: dict[str, Any]) -> None:
    gym.make(env_id, **option).close()
