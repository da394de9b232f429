"""Vertex View (Tier 3b), 3D renderer: pyrender + trimesh cubie meshes, offscreen.

The scene is a real cube: 27 black cubie boxes and 54 thin sticker tiles, one
tile per facelet position, seen through :data:`~.camera.VERTEX_CAMERA`.
D, L and B tiles are in the scene and hidden by the geometry itself.

Headless use (no GPU, no display) goes through EGL with Mesa's llvmpipe
software rasteriser.  Environment variables, all read when pyrender is first
imported or the renderer is first created:

- ``PYOPENGL_PLATFORM``: set to ``egl`` here with ``os.environ.setdefault``
  before pyrender is imported, unless already set (``osmesa`` is *not*
  supported with pyrender 0.1.45's PyOpenGL pin).
- ``EGL_DEVICE_ID``: which EGL device pyrender opens (default 0).
- ``EGL_PLATFORM=surfaceless``: forces Mesa's display-less EGL platform if a
  stale ``DISPLAY`` or Wayland socket gets in the way.
- ``LIBGL_ALWAYS_SOFTWARE=1``: forces llvmpipe on a machine whose GPU driver
  cannot make an offscreen context.

Process rules (each learnt the hard way, see the field notes): one
``OffscreenRenderer`` per process, created on first use and never deleted
(``delete()`` terminates the EGL display that every renderer in the process
shares); one scene, recoloured in place by changing each tile's material
colour (no mesh re-upload); rendering happens on the thread that created the
renderer; processes that fork after rendering hang, so vector envs must use
``AsyncVectorEnv(..., context="spawn")`` or ``"forkserver"``.  Shading is
baked into the colours (:data:`~.camera.FACE_SHADE`) and the frame is drawn
with ``RenderFlags.FLAT``, which is both 5-10x faster than lit rendering on
llvmpipe and the same picture as the painter's.
"""

from __future__ import annotations

import os
import threading
from typing import Any

import numpy as np

from ..engine.facelets import COLOUR_RGB, N_STICKERS, sticker_geometry
from .camera import FACE_SHADE, STICKER_HALF, VERTEX_CAMERA
from .canvas import BACKGROUND, BODY

TILE_THICKNESS = 0.02
CUBIE_SIDE = 0.98


def render_vertex_gl(colours: np.ndarray, size: int = 224, palette: np.ndarray = COLOUR_RGB) -> np.ndarray:
    """(size, size, 3) uint8 corner view of a cube given as 54 colour indices, drawn by OpenGL.

    The first call in a process creates the renderer (0.1-0.5 s on llvmpipe).
    """
    return _scene().render(np.asarray(colours), int(size), palette)


def _import_pyrender() -> Any:
    """Import pyrender for EGL (headless) unless the user chose another platform."""
    os.environ.setdefault("PYOPENGL_PLATFORM", "egl")
    import pyrender

    return pyrender


class _CubeScene:
    """The process's one renderer and scene; see the module docstring for why only one."""

    def __init__(self) -> None:
        pyrender = self._pyrender = _import_pyrender()
        self._thread = threading.get_ident()
        self._tiles = [_material(pyrender, (1.0, 1.0, 1.0)) for _ in range(N_STICKERS)]
        self._shade = _position_shade()
        self._last: np.ndarray | None = None
        self._scene = pyrender.Scene(bg_color=[c / 255 for c in BACKGROUND] + [1.0], ambient_light=[1.0] * 3)
        self._scene.add(_cube_mesh(pyrender, self._tiles))
        camera = pyrender.PerspectiveCamera(yfov=VERTEX_CAMERA.yfov, aspectRatio=1.0, znear=1.0, zfar=30.0)
        self._scene.add(camera, pose=VERTEX_CAMERA.pose())
        self._renderer = pyrender.OffscreenRenderer(224, 224)

    def render(self, colours: np.ndarray, size: int, palette: np.ndarray) -> np.ndarray:
        if colours.shape != (N_STICKERS,):
            raise ValueError(f"expected {N_STICKERS} colour indices, got shape {colours.shape}")
        if threading.get_ident() != self._thread:
            raise RuntimeError("the pyrender vertex renderer must be used from the thread that created it")
        self._recolour(np.rint(palette[colours] * self._shade[:, None]) / 255.0)
        if (self._renderer.viewport_width, self._renderer.viewport_height) != (size, size):
            self._renderer.viewport_width = self._renderer.viewport_height = size
        colour, _ = self._renderer.render(self._scene, flags=self._pyrender.RenderFlags.FLAT)
        return np.ascontiguousarray(colour, dtype=np.uint8)

    def _recolour(self, rgb: np.ndarray) -> None:
        """Set each tile's colour, touching only the tiles that changed since the last frame."""
        changed = range(N_STICKERS) if self._last is None else np.flatnonzero((rgb != self._last).any(axis=1))
        for k in changed:
            self._tiles[k].baseColorFactor = (*rgb[k], 1.0)
        self._last = rgb


_LOCK = threading.Lock()
_SCENE: _CubeScene | None = None


def _scene() -> _CubeScene:
    """The process's scene, created on first use and kept for the process's life."""
    global _SCENE
    with _LOCK:
        if _SCENE is None:
            _SCENE = _CubeScene()
        return _SCENE


def _material(pyrender: Any, rgb: tuple[float, float, float]) -> Any:
    return pyrender.MetallicRoughnessMaterial(baseColorFactor=(*rgb, 1.0), metallicFactor=0.0, roughnessFactor=1.0)


def _position_shade() -> np.ndarray:
    """Brightness of every position: its face's :data:`FACE_SHADE` (hidden faces 1.0)."""
    from ..engine.facelets import FACES

    return np.repeat([FACE_SHADE.get(f, 1.0) for f in FACES], 9).astype(np.float64)


def _cube_mesh(pyrender: Any, tiles: list[Any]) -> Any:
    """One mesh: the 27 cubies merged into one black primitive, plus one primitive per tile."""
    import trimesh

    body = trimesh.util.concatenate(
        [trimesh.creation.box(extents=[CUBIE_SIDE] * 3, transform=_translation((x, y, z)))
         for x in (-1, 0, 1) for y in (-1, 0, 1) for z in (-1, 0, 1)]
    )
    black = _material(pyrender, tuple(c / 255 for c in BODY))
    primitives = list(pyrender.Mesh.from_trimesh(body, material=black, smooth=False).primitives)
    pos, nrm = sticker_geometry()
    for k in range(N_STICKERS):
        extents = np.where(nrm[k] != 0, TILE_THICKNESS, 2 * STICKER_HALF)
        tile = trimesh.creation.box(extents=extents, transform=_translation(pos[k] + 0.5 * nrm[k]))
        primitives += pyrender.Mesh.from_trimesh(tile, material=tiles[k], smooth=False).primitives
    return pyrender.Mesh(primitives=primitives)


def _translation(offset: Any) -> np.ndarray:
    m = np.eye(4)
    m[:3, 3] = offset
    return m


__all__ = ["render_vertex_gl"]
