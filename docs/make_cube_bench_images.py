"""Regenerate docs/img/cube_bench_*.png and print the prompts shown in docs/cube-bench.md.

Run from the repository root: ``python docs/make_cube_bench_images.py``.  The pictures are the
images the items send to a model (the first item of each test at depth 2, seed 0), so the docs
show exactly what a model sees.
"""

from __future__ import annotations

from pathlib import Path

from PIL import Image

from cubebench.tasks.items import Prompt, Reply
from cubebench.tasks.registry import TESTS

OUT = Path(__file__).resolve().parent / "img"


NEW_VARIANTS = (("verification", "polarity", 2), ("closed-loop", "abstain-controlled", 15),
                ("closed-loop", "abstain-gated", 15))
"""The fairness-control variants whose prompts differ from the default's (issue 24); reconstruction's
``uniform-prior`` differs by its picture (``cube_bench_uniform_prior.png``).  Each with the depth-2 item shown (closed
loop: item 15, whose start has two optimal moves, so B.6.2's option set holds both)."""


def first_prompts(name: str, variant: str, index: int = 0) -> list[Prompt]:
    """The prompts of the test's depth-2 item ``index`` (the first by default), answered by the oracle."""
    test = TESTS[name]
    seen: list[Prompt] = []
    test.play(test.items(2, index + 1)[index], variant,
              lambda p: seen.append(p) or Reply(p.form.format(p.gold) if p.scored else "(reflection)"))
    return seen


def main() -> None:
    OUT.mkdir(exist_ok=True)
    prompt = first_prompts("move-choice", "image+text")[0]
    Image.fromarray(prompt.image).save(OUT / "cube_bench_net.png")
    for name, test in TESTS.items():
        variant = test.variants[0]
        p = first_prompts(name, variant)[0]
        print(f"===== {name} ({variant}) =====\n--- system\n{p.system}\n--- user\n{p.text}\n--- gold reply\n"
              f"{p.form.format(p.gold)}\n")
    held = first_prompts("reconstruction", "uniform-prior", 1)[0]  # item 1 of depth 2 holds the cube turned
    Image.fromarray(held.image).save(OUT / "cube_bench_uniform_prior.png")
    print(f"===== reconstruction (uniform-prior), item 1 =====\n--- gold reply\n{held.form.format(held.gold)}\n")
    for name, variant, index in NEW_VARIANTS:
        p = first_prompts(name, variant, index)[0]
        print(f"===== {name} ({variant}), item {index} =====\n--- user\n{p.text}\n--- gold reply\n{p.form.format(p.gold)}\n")


if __name__ == "__main__":
    main()
