"""Regenerate the pictures in docs/img/ and print the text forms used in docs/tiers/*.md.

Run from the repository root: ``python docs/make_images.py``.  Every picture
is an observation exactly as an agent receives it (``env.reset`` /
``env.step`` through ``gym.make``), of the one scrambled cube below, so the
docs show what the agent sees; the view-action axes are drawn on top of one
through the Vertex View's own camera.  The pyrender picture needs the
``render3d`` extra (headless: Mesa EGL, see docs/tiers/vertex.md).
"""

from __future__ import annotations

import sys
from pathlib import Path

import gymnasium as gym
import numpy as np
from PIL import Image, ImageDraw

import cubebench  # noqa: F401  (registers the ids)
from cubebench.render.canvas import font

SCRAMBLE = "R U2 F' L D B2 R' U"
"""The cube every picture shows."""
OUT = Path(__file__).resolve().parent / "img"
GREY = (128, 128, 128)


def observe(env_id: str, actions: str = "", **kwargs: object) -> object:
    """The observation after reset to :data:`SCRAMBLE` and the named actions."""
    env = gym.make(env_id, max_steps=None, **kwargs)
    obs, _ = env.reset(options={"scramble": SCRAMBLE})
    names = env.unwrapped.action_names
    for name in actions.split():
        obs = env.step(names.index(name))[0]
    return obs


def captioned_row(panels: list[tuple[str, np.ndarray]], caption_px: int = 16) -> Image.Image:
    """Images side by side, each with a caption above it, on the images' grey."""
    pad = 8
    height = max(img.shape[0] for _, img in panels)
    width = sum(img.shape[1] for _, img in panels) + pad * (len(panels) + 1)
    sheet = Image.new("RGB", (width, height + caption_px + 2 * pad), GREY)
    draw, x = ImageDraw.Draw(sheet), pad
    for caption, img in panels:
        draw.text((x + img.shape[1] / 2, pad + caption_px / 2), caption, fill="white", font=font(caption_px), anchor="mm")
        sheet.paste(Image.fromarray(img), (x, caption_px + pad))
        x += img.shape[1] + pad
    return sheet


def save(img: Image.Image | np.ndarray, name: str) -> None:
    image = img if isinstance(img, Image.Image) else Image.fromarray(img)
    image.save(OUT / name, optimize=True)
    print(f"wrote docs/img/{name}")


def onehot_picture(onehot: np.ndarray, row_px: int = 4, col_px: int = 20) -> np.ndarray:
    """The Tier 1 one-hot array (54, 6) drawn as it is: one row per sticker position, one column
    per colour, a 1 drawn in that column's colour, a 0 in dark grey."""
    from cubebench.engine import COLOUR_RGB

    cells = np.where(onehot[:, :, None] == 1, COLOUR_RGB[None, :, :], np.uint8(40))
    img = np.repeat(np.repeat(cells, row_px, axis=0), col_px, axis=1)
    img[:: 9 * row_px] = 0  # a black line where each face's nine positions start
    return img


def pyrender_vertex() -> np.ndarray | None:
    try:
        return observe("CubeBench-Vertex-v0", renderer="pyrender")
    except ImportError as exc:
        print(f"skipped the pyrender picture: {exc}", file=sys.stderr)
        return None


AXES_CUBE_PX = 320
"""Size of the vertex-view observation the view-action axes are drawn on."""
AXES = {"x": (0, "R", "F goes up"), "y": (1, "U", "R comes to the front"), "z": (2, "F", "L comes up")}
"""Each rotation: its axis in the engine's frame (x towards R, y towards U, z towards F), the face
turn it follows, and what it does to the held cube."""


def axis_rotation(axis: int, degrees: float) -> np.ndarray:
    """Rotation by ``degrees`` *clockwise* seen from the positive end of ``axis`` (as a face turn
    is clockwise seen from its face), a 3x3 matrix acting on column vectors."""
    a = np.radians(-degrees)  # clockwise seen from +axis = negative about +axis (right-hand rule)
    c, s = np.cos(a), np.sin(a)
    i, j = (axis + 1) % 3, (axis + 2) % 3
    rot = np.eye(3)
    rot[i, i], rot[i, j], rot[j, i], rot[j, j] = c, -s, s, c
    return rot


def check_rotation_against_engine(name: str, axis: int) -> None:
    """Fail unless a quarter of :func:`axis_rotation` moves every sticker where the engine's
    ``name`` rotation moves it, so the drawn arrows are the engine's, not a guess."""
    from cubebench.engine import MOVE_INDEX
    from cubebench.engine.facelets import sticker_geometry
    from cubebench.engine.moves import TABLE

    pos, nrm = sticker_geometry()
    rot = np.rint(axis_rotation(axis, 90)).astype(np.int64)
    # state[TABLE[m]]: position k receives the sticker from TABLE[m][k], so that sticker moved to k
    src = TABLE[MOVE_INDEX[name]].astype(np.int64)
    if not (np.array_equal(pos[src] @ rot.T, pos) and np.array_equal(nrm[src] @ rot.T, nrm)):
        raise AssertionError(f"the drawn direction of {name} is not the engine's")


def view_axes_picture(cube: np.ndarray, supersample: int = 4) -> Image.Image:
    """The vertex-view observation ``cube`` with the three view-action axes drawn on it through
    the same camera: a straight arrow along each positive axis out of its face's centre, a curved
    arrow round it for the unprimed rotation (checked against the engine), and a legend."""
    from cubebench.render.camera import VERTEX_CAMERA

    size = cube.shape[0]
    stem, ring_at, ring_r = (1.5, 3.4), 2.8, 0.72
    stems, arcs = {}, {}
    for name, (axis, _, _) in AXES.items():
        check_rotation_against_engine(name, axis)
        e = np.eye(3)[axis]
        stems[name] = VERTEX_CAMERA.project(np.outer(stem, e), size)
        start = ring_r * np.eye(3)[(axis + 1) % 3 if axis != 1 else 2]  # x: from U, y: from F, z: from R
        ring = [ring_at * e + axis_rotation(axis, t) @ start for t in np.linspace(0, 290, 59)]
        arcs[name] = VERTEX_CAMERA.project(np.array(ring), size)
    every = np.vstack([*stems.values(), *arcs.values()])
    pad_lo = np.ceil(np.maximum(0, -every.min(axis=0)) + 40)
    pad_hi = np.ceil(np.maximum(0, every.max(axis=0) - size) + 40)
    legend_w, line_px = 370, 22
    width, height = int(size + pad_lo[0] + pad_hi[0] + legend_w), int(size + pad_lo[1] + pad_hi[1])
    sheet = Image.new("RGB", (width, height), GREY)
    sheet.paste(Image.fromarray(cube), (int(pad_lo[0]), int(pad_lo[1])))

    # the arrows, drawn at ``supersample`` times the size and scaled down so their edges are smooth
    k = supersample
    overlay = Image.new("RGBA", (width * k, height * k), (0, 0, 0, 0))
    draw = ImageDraw.Draw(overlay)
    ink, halo = (20, 20, 20, 255), (255, 255, 255, 255)

    def arrow(points: np.ndarray, line: float, head: float) -> None:
        px = (points + pad_lo) * k
        tip = px[-1]
        d = (tip - px[-2]) / np.linalg.norm(tip - px[-2])
        n = np.array([-d[1], d[0]])
        for colour, grow in ((halo, 1.6), (ink, 0.0)):
            h = (head + 2 * grow) * k
            wing = [tip + d * grow * k, tip - d * h + n * h * 0.5, tip - d * h - n * h * 0.5]
            body = [tuple(p) for p in px[:-1]] + [tuple(tip - d * h * 0.8)]
            draw.line(body, fill=colour, width=round((line + 2 * grow) * k), joint="curve")
            draw.polygon([tuple(w) for w in wing], fill=colour)

    for name in AXES:
        arrow(arcs[name], 2.6, 13)
    for name in AXES:
        x, y = (stems[name][0] + pad_lo) * k
        r = 3.5 * k
        draw.ellipse((x - r, y - r, x + r, y + r), fill=ink, outline=halo, width=k)
        arrow(stems[name], 3.0, 13)
    overlay = overlay.resize((width, height), Image.LANCZOS)
    sheet.paste(overlay, (0, 0), overlay)

    draw = ImageDraw.Draw(sheet)
    for name in AXES:
        tip, back = stems[name][-1], stems[name][-2]
        x, y = tip + (tip - back) / np.linalg.norm(tip - back) * 17 + pad_lo
        draw.text((float(x), float(y)), name, fill="white", font=font(24), anchor="mm", stroke_width=2, stroke_fill="black")
    lines = [
        "View actions x x' y y' z z' turn the whole cube.",
        "Curved arrow: x, y or z, clockwise seen",
        "from the tip of its axis.",
        "",
        *(f"{name}  turns the cube as {face} does: {what}" for name, (_, face, what) in AXES.items()),
        "x' y' z'  turn it the other way",
        "",
        "Seen from the UFR corner: U on top,",
        "F lower left, R lower right.",
    ]
    left, top = size + pad_lo[0] + pad_hi[0], (height - len(lines) * line_px) / 2
    for i, text in enumerate(lines):
        draw.text((float(left), float(top + i * line_px)), text, fill="white", font=font(15))
    return sheet


VIEW_ACTIONS = ("x", "x'", "y", "y'", "z", "z'")


def main() -> None:
    OUT.mkdir(exist_ok=True)
    onehot = onehot_picture(observe("CubeBench-Symbolic-v0"))
    net = observe("CubeBench-Visual-v0")
    face = observe("CubeBench-Face-v0")
    painter = observe("CubeBench-Vertex-v0")
    gl = pyrender_vertex()
    save(onehot, "tier1_onehot.png")
    save(net, "tier2_net.png")
    save(face, "tier3_face.png")
    save(painter, "tier3_vertex_painter.png")
    panels = [("Tier 1: one-hot", onehot), ("Tier 2: net", net), ("Tier 3a: face", face), ("Tier 3b: vertex (painter)", painter)]
    if gl is not None:
        save(gl, "tier3_vertex_pyrender.png")
        panels.append(("Tier 3b: vertex (pyrender)", gl))
    save(captioned_row(panels), "tiers_overview.png")
    views = [(a or "start", observe("CubeBench-Vertex-v0", a)) for a in ("", *VIEW_ACTIONS)]
    save(captioned_row(views), "view_actions_vertex.png")
    faces = [(a or "start", observe("CubeBench-Face-v0", a, image_size=128)) for a in ("", *VIEW_ACTIONS)]
    save(captioned_row(faces), "view_actions_face.png")
    save(view_axes_picture(observe("CubeBench-Vertex-v0", image_size=AXES_CUBE_PX)), "view_actions_axes.png")
    print_text_forms()


def print_text_forms() -> None:
    """The text observations of the same cube, as pasted into docs/tiers/*.md."""
    forms = [
        ("CubeBench-Symbolic-v0", {"obs_format": "text"}),
        ("CubeBench-Symbolic-v0", {"obs_format": "text", "letters": "colours"}),
        ("CubeBench-Visual-v0", {"obs_format": "text"}),
        ("CubeBench-Face-v0", {"obs_format": "text"}),
        ("CubeBench-Vertex-v0", {"obs_format": "text"}),
    ]
    for env_id, kwargs in forms:
        print(f"\n--- {env_id} {kwargs}\n{observe(env_id, **kwargs)}")


if __name__ == "__main__":
    main()
