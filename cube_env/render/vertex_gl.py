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
shares); one scene, recoloured in place by rewriting the tiles' vertex
colours in their GL buffer (no scene rebuild); rendering happens on the thread that created the
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

from ..engine.facelets import COLOUR_RGB, FACES, N_STICKERS, sticker_geometry
from ..extras import install_hint
from .camera import FACE_SHADE, STICKER_HALF, VERTEX_CAMERA
from .canvas import BACKGROUND, BODY

TILE_THICKNESS = 0.02
CUBIE_SIDE = 0.98


def render_vertex_gl(colours: np.ndarray, size: int = 224, palette: np.ndarray = COLOUR_RGB) -> np.ndarray:
    """(size, size, 3) uint8 corner view of a cube given as 54 colour indices, drawn by OpenGL.

    The first call in a process creates the renderer (0.3-1.5 s on llvmpipe, mostly imports).
    """
    return _scene().render(np.asarray(colours), int(size), palette)


def ensure_renderer() -> None:
    """Create the process's renderer now (so a missing pyrender or EGL fails at env construction)."""
    _scene()


def _import_pyrender() -> Any:
    """Import pyrender for EGL (headless) unless the user chose another platform."""
    os.environ.setdefault("PYOPENGL_PLATFORM", "egl")
    try:
        import pyrender
        import trimesh  # noqa: F401  (the meshes are built with it)
    except ImportError as exc:
        raise ImportError(
            f"renderer='pyrender' needs pyrender and trimesh ({exc}): {install_hint('render3d')}, "
            "plus Mesa EGL on a headless machine (Debian: libegl1 libegl-mesa0 libgl1-mesa-dri libgl1 libopengl0)"
        ) from exc
    return pyrender


class _CubeScene:
    """The process's one renderer and scene; see the module docstring for why only one."""

    def __init__(self) -> None:
        pyrender = self._pyrender = _import_pyrender()
        self._thread, self.pid = threading.get_ident(), os.getpid()
        self._shade = _position_shade()
        self._last: np.ndarray | None = None
        self._scene = pyrender.Scene(bg_color=[c / 255 for c in BACKGROUND] + [1.0], ambient_light=[1.0] * 3)
        body, self._tiles = _body_primitive(pyrender), _tile_primitive(pyrender)
        self._scene.add(pyrender.Mesh(primitives=[body, self._tiles]))
        camera = pyrender.PerspectiveCamera(yfov=VERTEX_CAMERA.yfov, aspectRatio=1.0, znear=1.0, zfar=30.0)
        self._scene.add(camera, pose=VERTEX_CAMERA.pose())
        self._renderer = pyrender.OffscreenRenderer(224, 224)

    def render(self, colours: np.ndarray, size: int, palette: np.ndarray) -> np.ndarray:
        if colours.shape != (N_STICKERS,):
            raise ValueError(f"expected {N_STICKERS} colour indices, got shape {colours.shape}")
        if threading.get_ident() != self._thread:
            raise RuntimeError("the pyrender vertex renderer must be used from the thread that created it")
        self._recolour(np.rint(palette[colours] * self._shade[:, None]).astype(np.float32) / 255)
        if (self._renderer.viewport_width, self._renderer.viewport_height) != (size, size):
            self._renderer.viewport_width = self._renderer.viewport_height = size
        colour, _ = self._renderer.render(self._scene, flags=self._pyrender.RenderFlags.FLAT)
        return np.ascontiguousarray(colour, dtype=np.uint8)

    def _recolour(self, rgb: np.ndarray) -> None:
        """Write the tiles' vertex colours and, once uploaded, their GL vertex buffer in place.

        pyrender uploads a primitive once, as one interleaved float32 buffer
        (positions, normals, colours); rewriting that buffer is the only way
        to recolour without re-creating the mesh, and it costs one
        ``glBufferSubData`` of ~80 KB.  Relies on pyrender 0.1.45's layout,
        which the pixel-readback tests check on every run.
        """
        if self._last is not None and np.array_equal(rgb, self._last):
            return
        self._last = rgb
        rgba = np.concatenate([rgb, np.ones((N_STICKERS, 1), np.float32)], axis=1)
        self._tiles.color_0 = np.repeat(rgba, len(self._tiles.positions) // N_STICKERS, axis=0)
        if self._tiles._buffers:  # already on the GPU: update it (see docstring)
            from OpenGL import GL

            self._renderer._platform.make_current()  # our context, even if the process has others
            data = np.ascontiguousarray(
                np.hstack([self._tiles.positions, self._tiles.normals, self._tiles.color_0]), dtype=np.float32
            )
            GL.glBindBuffer(GL.GL_ARRAY_BUFFER, self._tiles._buffers[0])
            GL.glBufferSubData(GL.GL_ARRAY_BUFFER, 0, data.nbytes, data)
            GL.glBindBuffer(GL.GL_ARRAY_BUFFER, 0)


_LOCK = threading.Lock()
_SCENE: _CubeScene | None = None


def _scene() -> _CubeScene:
    """The process's scene, created on first use and kept for the process's life.

    A process forked from one that has a renderer inherits a dead EGL context
    and would hang on its first frame; it gets a clear error instead.
    """
    global _SCENE
    with _LOCK:
        if _SCENE is None:
            _SCENE = _CubeScene()
        if _SCENE.pid != os.getpid():
            raise RuntimeError(
                f"the pyrender renderer was created in process {_SCENE.pid} and this process was forked "
                "from it; forked processes cannot render (EGL): start workers with the 'spawn' or "
                "'forkserver' multiprocessing context"
            )
        return _SCENE


def _position_shade() -> np.ndarray:
    """Brightness of every position: its face's :data:`FACE_SHADE` (hidden faces 1.0)."""
    return np.repeat([FACE_SHADE.get(f, 1.0) for f in FACES], 9).astype(np.float32)


def _flat_arrays(mesh: Any) -> tuple[np.ndarray, np.ndarray]:
    """Unindexed (positions, normals) of a trimesh, three vertices per triangle, flat-shaded."""
    positions = mesh.vertices[mesh.faces].reshape(-1, 3)
    normals = np.repeat(mesh.face_normals, 3, axis=0)
    return positions.astype(np.float32), normals.astype(np.float32)


def _body_primitive(pyrender: Any) -> Any:
    """The 27 black cubie boxes merged into one primitive."""
    import trimesh

    boxes = [trimesh.creation.box(extents=[CUBIE_SIDE] * 3, transform=_translation((x, y, z)))
             for x in (-1, 0, 1) for y in (-1, 0, 1) for z in (-1, 0, 1)]
    positions, normals = _flat_arrays(trimesh.util.concatenate(boxes))
    black = pyrender.MetallicRoughnessMaterial(baseColorFactor=[c / 255 for c in BODY] + [1.0])
    return pyrender.Primitive(positions=positions, normals=normals, material=black)


def _tile_primitive(pyrender: Any) -> Any:
    """All 54 sticker tiles in facelet order, one primitive, the same vertex count per tile."""
    import trimesh

    pos, nrm = sticker_geometry()
    tiles = [trimesh.creation.box(extents=np.where(nrm[k] != 0, TILE_THICKNESS, 2 * STICKER_HALF),
                                  transform=_translation(pos[k] + 0.5 * nrm[k])) for k in range(N_STICKERS)]
    arrays = [_flat_arrays(t) for t in tiles]
    positions = np.concatenate([a[0] for a in arrays])
    normals = np.concatenate([a[1] for a in arrays])
    white = np.ones((len(positions), 4), np.float32)
    return pyrender.Primitive(positions=positions, normals=normals, color_0=white,
                              material=pyrender.MetallicRoughnessMaterial(baseColorFactor=[1.0] * 4))


def _translation(offset: Any) -> np.ndarray:
    m = np.eye(4)
    m[:3, 3] = offset
    return m


__all__ = ["render_vertex_gl", "ensure_renderer"]
