"""Regenerate docs/img/stare_*.png and print the prompts shown in docs/stare.md.

Run from the repository root: ``python docs/make_stare_images.py``.  The pictures are the images the
items send to a model (the first items of each STARE test at depth 2, seed 0, as in
``benchmarks/suites/stare.json``), so the docs show exactly what a model sees.
"""

from __future__ import annotations

from pathlib import Path

import textwrap

import numpy as np
from PIL import Image, ImageDraw

from cubebench.render.canvas import font
from cubebench.tasks.stare import NetChoice, NetFold, NetPerception
from cubebench.render.fold import tile
from cubebench.tasks.stare.shown import FRAME_PX

OUT = Path(__file__).resolve().parent / "img"


def save(image, name: str) -> None:
    Image.fromarray(image).save(OUT / f"stare_{name}.png")


def message_picture(parts, width: int = 1000) -> np.ndarray:
    """A multi-image message drawn top to bottom as a chat client shows it: each text wrapped, each image in turn."""
    blocks, face = [], font(18)
    for part in parts:
        if isinstance(part, str):
            lines = [w for line in part.strip("\n").split("\n") for w in (textwrap.wrap(line, 100) or [""])]
            block = Image.new("RGB", (width, 24 * len(lines) + 8), (255, 255, 255))
            draw = ImageDraw.Draw(block)
            for k, line in enumerate(lines):
                draw.text((8, 4 + 24 * k), line, fill=(0, 0, 0), font=face)
            blocks.append(block)
        else:
            block = Image.new("RGB", (width, part.shape[0] + 8), (235, 240, 250))
            block.paste(Image.fromarray(part), (8, 4))
            blocks.append(block)
    sheet = Image.new("RGB", (width, sum(b.height for b in blocks)), (255, 255, 255))
    y = 0
    for block in blocks:
        sheet.paste(block, (0, y))
        y += block.height
    return np.asarray(sheet)


def main() -> None:
    OUT.mkdir(exist_ok=True)
    fold, choice, perception = NetFold(), NetChoice(), NetPerception()
    items = fold.items(2, 2)
    yes, no = (next(i for i in items if i.data["truth"] == t) for t in ("Yes", "No"))
    save(fold.prompt(yes, "question").image, "net_fold_yes")
    save(fold.prompt(no, "question").image, "net_fold_no")
    save(fold.prompt(yes, "frames").image, "net_fold_frames_yes")
    save(fold.prompt(no, "frames").image, "net_fold_frames_no")
    save(choice.prompt(choice.items(2, 1)[0], "image").image, "net_choice")
    for setup in ("frames-partial", "frames-last", "final-form"):
        for item, truth in ((yes, "yes"), (no, "no")):
            save(fold.prompt(item, setup).image, f"net_fold_{setup.replace('-', '_')}_{truth}")
    save(message_picture(fold.prompt(no, "frames-interleaved").parts), "net_fold_interleaved_no")
    perturbed = fold.net(no, "perturbed")
    save(fold.prompt(no, "perturbed").image, "net_fold_perturbed_no")
    # not shown to a model: what the perturbed steps do, step by step (the docs explain the negative with it)
    save(tile([perturbed.image(FRAME_PX)] + [perturbed.frame(k) for k in range(1, 6)],
              ["The net"] + [f"After step {k}" for k in range(1, 6)], cols=3), "net_fold_perturbed_outcome")
    probe = perception.items(2, 1)[0]
    save(perception.prompt(probe, "folded").image, "perception_folded")
    for name, prompt in (("net-fold steps (the No item)", fold.prompt(no, "steps")),
                         ("net-fold image-text (the No item)", fold.prompt(no, "image-text")),
                         ("net-fold frames-last (the No item)", fold.prompt(no, "frames-last")),
                         ("net-fold final-form (the No item)", fold.prompt(no, "final-form")),
                         ("net-fold frames-interleaved (the No item; [image k] where each image goes)",
                          fold.prompt(no, "frames-interleaved")),
                         ("net-fold perturbed (the Yes item)", fold.prompt(yes, "perturbed")),
                         ("net-fold perturbed (the No item)", fold.prompt(no, "perturbed")),
                         ("net-fold text (the No item)", fold.prompt(no, "text")),
                         ("net-choice text", choice.prompt(choice.items(2, 1)[0], "text")),
                         *((f"net-perception {k}", perception.prompt(probe, k)) for k in perception.variants)):
        print(f"===== {name} =====\n--- system\n{prompt.system}\n--- user\n{prompt.text}\n--- gold reply\n"
              f"{prompt.form.format(prompt.gold)}\n")
    print("No item:", {k: no.data[k] for k in ("shape", "stratum", "near_miss", "near_miss_of", "failure")})
    print("No item's perturbed net:", perturbed.perturb, "first failure at step", perturbed.folding.first_failure,
          perturbed.folding.steps[perturbed.folding.first_failure - 1].failure)


if __name__ == "__main__":
    main()
