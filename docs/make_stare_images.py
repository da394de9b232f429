"""Regenerate docs/img/stare_*.png and print the prompts shown in docs/stare.md.

Run from the repository root: ``python docs/make_stare_images.py``.  The pictures are the images the
items send to a model (the first items of each STARE test at depth 2, seed 0, as in
``benchmarks/suites/stare.json``), so the docs show exactly what a model sees.
"""

from __future__ import annotations

from pathlib import Path

from PIL import Image

from cubebench.tasks.stare import NetChoice, NetFold, NetPerception

OUT = Path(__file__).resolve().parent / "img"


def save(image, name: str) -> None:
    Image.fromarray(image).save(OUT / f"stare_{name}.png")


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
    probe = perception.items(2, 1)[0]
    save(perception.prompt(probe, "folded").image, "perception_folded")
    for name, prompt in (("net-fold steps (the No item)", fold.prompt(no, "steps")),
                         ("net-fold text (the No item)", fold.prompt(no, "text")),
                         ("net-choice text", choice.prompt(choice.items(2, 1)[0], "text")),
                         *((f"net-perception {k}", perception.prompt(probe, k)) for k in perception.variants)):
        print(f"===== {name} =====\n--- system\n{prompt.system}\n--- user\n{prompt.text}\n--- gold reply\n"
              f"{prompt.form.format(prompt.gold)}\n")
    print("No item:", {k: no.data[k] for k in ("shape", "stratum", "near_miss", "near_miss_of", "failure")})


if __name__ == "__main__":
    main()
