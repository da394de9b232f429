"""What a question run sends and may receive, per question: the prompt's size and the reply's cap, per rules.

For each shipped question suite (the full ones by default) and each answer rules it has, the oracle plays
the suite's first ``--items`` items of every test, depth and variant (ladders: levels 1-3), and every prompt
it is asked is sized as :func:`cubebench.agents.llm.messages.estimate_tokens` sizes a request for a budget
check (4 characters per token of text, 800 per image: an estimate, not a provider's tokenizer).  Beside it:
the questions per item and the default token limit of one reply, so the worst case of a model that uses the
whole limit on every reply is ``questions x (input + limit)``.

    python benchmarks/prompt_sizes.py [--suites cube-bench,inf-bench,stare] [--items 4]
"""

from __future__ import annotations

import argparse
from dataclasses import asdict
from statistics import mean

from cubebench.agents.answerers import ModelAnswerer, OracleAnswerer
from cubebench.agents.llm.messages import estimate_tokens
from cubebench.runner.protocols.questions.settings import reply_tokens
from cubebench.runner.protocols.questions.suite import configured_test
from cubebench.runner.suites import load_suite
from cubebench.tasks.items import Item, Prompt, Reply


class _Sized:
    """Stands in for a model client: nothing is sent; ``ModelAnswerer.messages`` builds what would be."""

    model = "sizer"


def sizes(suite_name: str, rules: str, items: int) -> dict[str, tuple[float, int, float]]:
    """Per test: (mean input tokens per question, largest, mean questions per item)."""
    suite = load_suite(suite_name)
    builder = ModelAnswerer(_Sized())  # type: ignore[arg-type]
    oracle = OracleAnswerer()
    out = {}
    for name, grid in suite.tests.items():
        test = configured_test(name, grid.options, rules)
        depths = getattr(grid, "depths", (1, 2, 3))
        tokens: list[int] = []
        asked_per_item: list[int] = []
        for depth in depths:
            for item in test.items(depth, items, seed=suite.seed, metric=suite.metric):
                for variant in grid.variants:
                    asked: list[Prompt] = []

                    def ask(prompt: Prompt) -> Reply:
                        asked.append(prompt)
                        return oracle.answer(prompt)

                    test.play(Item(**asdict(item)), variant, ask)
                    tokens += [estimate_tokens(builder.messages(p)) for p in asked]
                    asked_per_item.append(len(asked))
        out[name] = (mean(tokens), max(tokens), mean(asked_per_item))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--suites", default="cube-bench,inf-bench,stare")
    parser.add_argument("--items", type=int, default=4, help="items per test, depth and variant (default 4)")
    args = parser.parse_args()
    print("| suite | rules | test | input tokens per question, mean (max) | questions per item (oracle) | "
          "reply limit |")
    print("|---|---|---|---|---|---|")
    for name in args.suites.split(","):
        suite = load_suite(name)
        for rules in suite.rule_sets:
            for test, (avg, top, per_item) in sizes(name, rules, args.items).items():
                print(f"| {name} | {rules} | {test} | {avg:.0f} ({top}) | {per_item:.2f} | "
                      f"{reply_tokens(rules, suite.tests)} |")


if __name__ == "__main__":
    main()
