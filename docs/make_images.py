"""Regenerate the pictures in docs/img/ and print the text forms used in docs/tiers.md.

Run from the repository root: ``python docs/make_images.py``.  Every picture
is an observation exactly as an agent receives it (``env.reset`` /
``env.step`` through ``gym.make``), of the one scrambled cube below, so the
docs show what the agent sees.  The pyrender picture needs the ``render3d``
extra (headless: Mesa EGL, see docs/tiers.md).
"""

from __future__ import annotations

import sys
from pathlib import Path

import gymnasium as gym
import numpy as np
from PIL import Image, ImageDraw, ImageFont

import cube_env  # noqa: F401  (registers the ids)

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


def font(px: int) -> ImageFont.ImageFont:
    try:
        return ImageFont.load_default(size=px)
    except TypeError:
        return ImageFont.load_default()


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
    from cube_env.engine import COLOUR_RGB

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
    views = [(a or "start", observe("CubeBench-Vertex-v0", a)) for a in ("", "x", "x'", "y", "y'", "z", "z'")]
    save(captioned_row(views), "view_actions_vertex.png")
    faces = [(a or "start", observe("CubeBench-Face-v0", a, image_size=128)) for a in ("", "x", "x'", "y", "y'")]
    save(captioned_row(faces), "view_actions_face.png")
    print_text_forms()


def print_text_forms() -> None:
    """The text observations of the same cube, as pasted into docs/tiers.md."""
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
