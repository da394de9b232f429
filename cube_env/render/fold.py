"""Cube nets flat and partly folded, as RGB images (STARE's cube-net folding, ``docs/stare.md``).

* :func:`render_flat_net`: the net seen from above, each cell a square of its own colour with a black
  grid line round it and its number in the middle.  Every net is drawn at the same scale (``grid``
  cells across the image, whatever the net's size) and centred, so image size and cell size say
  nothing about which net it is.
* :func:`render_folded`: faces in 3D (corner coordinates in any unit frame), projected through a
  pinhole :class:`~cubebench.render.camera.Camera` and painted back to front (the painter's algorithm:
  faces sorted by the depth of their centres), each a slightly translucent polygon, so a face behind
  another still shows through, with its number at its projected centre (the numbers of faces in one place,
  an overlap, side by side).
* :func:`tile`: several images in a grid, each under its caption, on the same white paper (a prompt
  carries one image, so a sequence of frames is shown as one sheet: :mod:`.sheet`).

Everything is Pillow drawing; no OpenGL.  This module knows geometry and colours only, not nets'
rules or tests.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
from PIL import Image, ImageDraw

from .camera import Camera
from .canvas import font
from .sheet import contact_sheet

Colour = tuple[int, int, int]
NET_BACKGROUND: Colour = (255, 255, 255)
"""White paper behind the net, as in the paper's matplotlib figures."""
EDGE: Colour = (0, 0, 0)
TEXT: Colour = (0, 0, 0)
TEXT_OUTLINE: Colour = (255, 255, 255)
FACE_ALPHA = 0.85
"""Opacity of a face in 3D frames: opaque enough to read, translucent enough to see a face behind it."""
VIEW = (0.6, 1.5, 1.0)
"""Direction from the scene to the camera in frames (x east, y up, z south): high above the table (about
52 degrees up), from the south-east, so the net's north stays at the top of the image as in the flat drawing."""


def _check_faces(n: int, labels: Sequence[str], colours: Sequence[Colour]) -> None:
    if len(labels) != n or len(colours) != n:
        raise ValueError(f"need one label and one colour per face: {n} faces, {len(labels)} labels, "
                         f"{len(colours)} colours")


def _label(draw: ImageDraw.ImageDraw, xy: tuple[float, float], text: str, px: int) -> None:
    """``text`` centred at ``xy``, black with a white outline (legible on any face colour)."""
    draw.text(xy, text, fill=TEXT, font=font(px), anchor="mm", stroke_width=max(px // 12, 1), stroke_fill=TEXT_OUTLINE)


def render_flat_net(cells: Sequence[tuple[int, int]], labels: Sequence[str], colours: Sequence[Colour],
                    size: int = 384, grid: int = 7) -> np.ndarray:
    """(size, size, 3) uint8 image of the flat net: cell ``(row, col)`` coloured ``colours[k]``, labelled
    ``labels[k]``; cells are ``size // grid`` pixels, the net centred."""
    _check_faces(len(cells), labels, colours)
    if not cells:
        raise ValueError("a net needs at least one cell")
    rows = [r for r, _ in cells]
    cols = [c for _, c in cells]
    height, width = max(rows) - min(rows) + 1, max(cols) - min(cols) + 1
    if max(height, width) > grid:
        raise ValueError(f"a net {height}x{width} cells does not fit a grid of {grid} cells")
    cell = size // grid
    x0 = (size - width * cell) // 2 - min(cols) * cell
    y0 = (size - height * cell) // 2 - min(rows) * cell
    image = Image.new("RGB", (size, size), NET_BACKGROUND)
    draw = ImageDraw.Draw(image)
    line = max(cell // 24, 1)
    for (r, c), label, colour in zip(cells, labels, colours):
        x, y = x0 + c * cell, y0 + r * cell
        draw.rectangle([x, y, x + cell, y + cell], fill=colour, outline=EDGE, width=line)
        _label(draw, (x + cell / 2, y + cell / 2), label, int(cell * 0.45))
    return np.asarray(image, dtype=np.uint8).copy()


def fit_camera(points: np.ndarray, view: Sequence[float] = VIEW, fill: float = 0.9) -> Camera:
    """A camera looking at the centre of ``points`` (N, 3) from direction ``view``, world ``y`` up, with
    every point inside ``fill`` of the image's half-width (the same camera for a whole fold's frames)."""
    pts = np.asarray(points, dtype=np.float64).reshape(-1, 3)
    centre = (pts.min(axis=0) + pts.max(axis=0)) / 2
    radius = float(np.max(np.linalg.norm(pts - centre, axis=1))) or 1.0
    direction = np.asarray(view, dtype=np.float64)
    direction /= np.linalg.norm(direction)
    eye = centre + direction * radius * 3.0
    forward = -direction
    right = np.cross(forward, [0.0, 1.0, 0.0])
    right /= np.linalg.norm(right)
    up = np.cross(right, forward)
    rel = pts - eye
    depth = rel @ forward
    extent = float(np.max(np.abs(np.stack([rel @ right, rel @ up])) / depth))
    return Camera(eye=eye, right=right, up=up, forward=forward, yfov=float(2 * np.arctan(extent / fill)))


def render_folded(faces: Sequence[np.ndarray], labels: Sequence[str], colours: Sequence[Colour], camera: Camera,
                  size: int = 384) -> np.ndarray:
    """(size, size, 3) uint8 image of square faces in 3D (each (4, 3) corners in order round the square),
    seen through ``camera``, painted far to near with their labels."""
    _check_faces(len(faces), labels, colours)
    quads = [np.asarray(f, dtype=np.float64).reshape(4, 3) for f in faces]
    depth = [float((q.mean(axis=0) - camera.eye) @ camera.forward) for q in quads]
    image = Image.new("RGB", (size, size), NET_BACKGROUND)
    label_px = max(size // 18, 8)
    places: dict[tuple[float, ...], list[int]] = {}
    for k, q in enumerate(quads):  # faces in one place (an overlap) get their labels side by side, all legible
        places.setdefault(tuple(np.round(q.mean(axis=0), 6)), []).append(k)
    shift = {k: (i - (len(ks) - 1) / 2) * label_px * 1.1 for ks in places.values() for i, k in enumerate(ks)}
    late: list[tuple[tuple[float, float], str]] = []
    for k in sorted(range(len(quads)), key=lambda i: -depth[i]):
        corners = [tuple(p) for p in camera.project(quads[k], size)]
        layer = Image.new("RGBA", (size, size), (0, 0, 0, 0))
        ImageDraw.Draw(layer).polygon(corners, fill=(*colours[k], int(255 * FACE_ALPHA)))
        image.paste(layer, (0, 0), layer)
        draw = ImageDraw.Draw(image)
        draw.line([*corners, corners[0]], fill=EDGE, width=max(size // 192, 1))
        centre = camera.project(quads[k].mean(axis=0, keepdims=True), size)[0]
        at = (float(centre[0]) + shift[k], float(centre[1]))
        if shift[k]:
            late.append((at, labels[k]))  # drawn last: the face painted over it must not hide it
        else:
            _label(draw, at, labels[k], label_px)
    draw = ImageDraw.Draw(image)
    for at, text in late:
        _label(draw, at, text, label_px)
    return np.asarray(image, dtype=np.uint8).copy()


def tile(images: Sequence[np.ndarray], captions: Sequence[str], cols: int) -> np.ndarray:
    """``images`` (all the same shape) in a grid ``cols`` wide, each under its caption, on white."""
    return contact_sheet(images, captions, cols, background=NET_BACKGROUND, text=TEXT, caption_px=28, gap=8,
                         border=(160, 160, 160))


__all__ = ["NET_BACKGROUND", "FACE_ALPHA", "VIEW", "render_flat_net", "fit_camera", "render_folded", "tile"]
