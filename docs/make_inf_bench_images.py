"""Regenerate docs/img/inf_bench_*.png and print the prompts shown in docs/inf-bench.md.

Run from the repository root: ``python docs/make_inf_bench_images.py``.  The pictures are the images
the items send to a model (the first level-3 item of suite seed 0), so the docs show what a model sees.
"""

from __future__ import annotations

from pathlib import Path

from PIL import Image

from cubebench.tasks.inf_bench import Forward, Inverse

OUT = Path(__file__).resolve().parent / "img"


def main() -> None:
    OUT.mkdir(exist_ok=True)
    for test in (Forward(), Inverse()):
        item = test.items(3, 1, seed=0)[0]
        image = test.prompt(item, "image")
        Image.fromarray(image.image).save(OUT / f"inf_bench_{test.name.split('-')[1]}.png")
        encoded = test.prompt(item, "encoded")
        print(f"===== {test.name} (image) =====\n{image.text}\n--- gold: {image.gold}\n")
        print(f"===== {test.name} (encoded) =====\n--- system\n{encoded.system}\n--- user\n{encoded.text}\n")


if __name__ == "__main__":
    main()
