"""The Vertex View camera and sticker geometry, shared by both vertex renderers.

Both renderers use this one perspective camera, placed on the diagonal
through the UFR corner and looking at the cube's centre with U up, so a
sticker lands on the same pixel whichever renderer draws it.  Frame
(from ``facelets``): x towards R, y towards U, z towards F; cubies are unit
cubes, so the cube spans -1.5..1.5 on each axis.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..engine.facelets import sticker_geometry

VISIBLE_FACES = "URF"
"""Faces the corner camera sees; positions 0..26 in facelet order."""
N_VISIBLE = 27
STICKER_HALF = 0.45
"""Half the side of a sticker (cubie side 1): 0.05 of black plastic shows around each."""
FACE_SHADE = {"U": 1.0, "R": 0.78, "F": 0.9}
"""Brightness of each visible face (light from above-front-left), baked into colours."""


@dataclass(frozen=True)
class Camera:
    """A pinhole camera: position, orthonormal axes and the vertical field of view.

    ``forward`` points into the scene; image x grows along ``right`` and
    image y grows against ``up`` (row 0 is the top).
    """

    eye: np.ndarray
    right: np.ndarray
    up: np.ndarray
    forward: np.ndarray
    yfov: float

    def project(self, points: np.ndarray, size: int) -> np.ndarray:
        """Pixel coordinates (x, y) of world points in a ``size``-square image (N, 2) float."""
        rel = np.asarray(points, dtype=np.float64) - self.eye
        depth = rel @ self.forward
        scale = 1.0 / (depth * np.tan(self.yfov / 2))
        ndc_x, ndc_y = (rel @ self.right) * scale, (rel @ self.up) * scale
        return np.stack([(ndc_x + 1) * size / 2, (1 - ndc_y) * size / 2], axis=1)

    def pose(self) -> np.ndarray:
        """4x4 camera-to-world matrix in OpenGL's convention (the camera looks down its -z)."""
        pose = np.eye(4)
        pose[:3, 0], pose[:3, 1], pose[:3, 2], pose[:3, 3] = self.right, self.up, -self.forward, self.eye
        return pose


def corner_camera(distance: float = 9.0, fill: float = 0.86) -> Camera:
    """Camera on the UFR diagonal at ``distance`` from the centre, U up, the cube
    filling ``fill`` of the image's half-width in its widest direction."""
    eye = np.full(3, distance / np.sqrt(3.0))
    forward = -eye / np.linalg.norm(eye)
    right = np.cross(forward, [0.0, 1.0, 0.0])
    right /= np.linalg.norm(right)
    up = np.cross(right, forward)
    corners = np.array([[x, y, z] for x in (-1.5, 1.5) for y in (-1.5, 1.5) for z in (-1.5, 1.5)])
    rel = corners - eye
    depth = rel @ forward
    extent = np.max(np.abs(np.stack([rel @ right, rel @ up])) / depth)
    return Camera(eye=eye, right=right, up=up, forward=forward, yfov=float(2 * np.arctan(extent / fill)))


VERTEX_CAMERA = corner_camera()
"""The one camera of the Vertex View."""


def sticker_quads() -> tuple[np.ndarray, np.ndarray]:
    """(centres (54, 3), corners (54, 4, 3)) of every sticker in world units, facelet order.

    A sticker sits on the outer face of its cubie: centre = cubie centre +
    half the normal; its corners go round the square in order.
    """
    pos, nrm = sticker_geometry()
    pos, nrm = pos.astype(np.float64), nrm.astype(np.float64)
    centres = pos + 0.5 * nrm
    u = np.roll(np.abs(nrm), 1, axis=1)  # a unit axis perpendicular to the normal
    v = np.cross(nrm, u)
    signs = np.array([[1, 1], [1, -1], [-1, -1], [-1, 1]], dtype=np.float64) * STICKER_HALF
    corners = centres[:, None, :] + signs[None, :, :1] * u[:, None, :] + signs[None, :, 1:] * v[:, None, :]
    return centres, corners


def sticker_centres_px(size: int, camera: Camera = VERTEX_CAMERA) -> np.ndarray:
    """Pixel (x, y) of the centre of each visible sticker (positions 0..26) in a ``size`` image."""
    centres, _ = sticker_quads()
    return camera.project(centres[:N_VISIBLE], size)


def visible_shade() -> np.ndarray:
    """Brightness of each visible position (0..26), from :data:`FACE_SHADE`."""
    return np.repeat([FACE_SHADE[f] for f in VISIBLE_FACES], 9).astype(np.float32)


__all__ = [
    "Camera", "VERTEX_CAMERA", "corner_camera", "sticker_quads", "sticker_centres_px",
    "visible_shade", "FACE_SHADE", "VISIBLE_FACES", "N_VISIBLE", "STICKER_HALF",
]
