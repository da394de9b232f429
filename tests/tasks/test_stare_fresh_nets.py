"""STARE's fresh nets per setup (issue 33, docs/stare.md "Fresh nets per setup"): no test or set of setups re-shows a
net another shows, so an endpoint that remembers every picture, net and step text of a run lands at chance.

The first construction asked every setup on one net per item: a perturbed Yes item showed exactly the picture the
``question`` setup of the same index had shown, and ``final-form`` (the answer in sight) came right before
``frames-interleaved`` of the same net and steps.  :class:`SeenItBefore` plays both tricks through the runner, as a
model server that keeps state across requests.
"""

from __future__ import annotations

import base64
import hashlib
import itertools
import json
import re
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from helpers import needs

from cubebench.agents.records import png_bytes
from cubebench.runner.cli import main
from cubebench.runner.protocols.questions.plan import plan_items
from cubebench.runner.protocols.questions.suite import configured_test
from cubebench.runner.store import open_run
from cubebench.runner.suites import load_suite
from cubebench.tasks.items import Item
from cubebench.tasks.metrics import Proportion
from cubebench.tasks.stare import NetChoice, NetFold, NetPerception
from cubebench.tasks.stare.folding import fold
from cubebench.tasks.stare.net_fold import SETUP_SETS
from cubebench.tasks.stare.nets import hexominoes, shape_id, valid_pool
from cubebench.tasks.stare.perturbed import matched_plans, moved_plan, moved_words, valid_plans
from cubebench.tasks.stare.polyomino import SYMMETRIES, orientations
from cubebench.tasks.stare.shown import NET_GROUPS, ShownNet, net_group, net_key

NET_FOLD, NET_CHOICE, PERCEPTION = NetFold(), NetChoice(), NetPerception()


# --- the groups of numberings -------------------------------------------------------------------------------------
def test_every_hexomino_has_numberings_in_every_group() -> None:
    for shape in hexominoes():
        cells = sorted(shape)
        found = Counter(net_group(net_key(cells, p)) for p in itertools.permutations(range(1, 7)))
        assert set(found) == set(NET_GROUPS), (shape_id(shape), found)


# --- the perturbed couples ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("depth", [1, 2])
def test_moved_plans_read_as_the_moved_words(depth: int) -> None:
    """The symmetry map of :mod:`cubebench.tasks.stare.perturbed` agrees with the fold check: a valid plan carried to
    every orientation reads as its words carried along, and so does a perturbed one (its axis choice recomputed)."""
    rng = np.random.default_rng(depth)
    valid = list(valid_plans(depth).items())
    for k in rng.choice(len(valid), 12, replace=False):
        words, plan = valid[int(k)]
        assert plan.signature() == words
        for symmetry in range(len(SYMMETRIES)):
            assert moved_plan(plan, symmetry).signature() == moved_words(words, symmetry)
    couples = [c for kind in matched_plans(depth).values() for c in kind]
    for k in rng.choice(len(couples), 12, replace=False):
        _, perturbed = couples[int(k)]
        for symmetry in range(len(SYMMETRIES)):
            assert moved_plan(perturbed, symmetry).signature() == moved_words(perturbed.signature(), symmetry)


@pytest.mark.parametrize("depth", [1, 2])
def test_every_couple_is_a_valid_fold_and_a_perturbed_plan_worded_alike(depth: int) -> None:
    """Re-derived for every couple: the valid plan folds into a cube and the perturbed one does not, by the fold check
    and by the independent integer re-fold; their words are the same; each kind (x, y) has as many couples as (y, x),
    and within a kind every orientation of a shape is as frequent as any other (the drawing says nothing)."""
    from test_stare_variants import closes_exactly

    kinds = matched_plans(depth)
    for (x, y), couples in kinds.items():
        assert len(couples) == len(kinds[(y, x)]), (x, y)
        for valid, perturbed in couples:
            assert valid.perturb is None and perturbed.perturb is not None
            assert (valid.shape, perturbed.shape) == (x, y) and valid.signature() == perturbed.signature()
            perturb = {perturbed.perturb[0]: perturbed.perturb[1:]}
            assert fold(valid.cells, valid.base, valid.order).folds
            assert not fold(perturbed.cells, perturbed.base, perturbed.order, perturb).folds
        for side in (0, 1):
            seen = Counter(couple[side].cells for couple in couples)
            shape = hexominoes()[(x, y)[side]]
            assert set(seen) == {tuple(sorted(o)) for o in orientations(shape)} and len(set(seen.values())) == 1
    sample = [c for kind in kinds.values() for c in kind[:: max(1, len(kind) // 6)]]
    for valid, perturbed in sample:
        for plan, folds in ((valid, True), (perturbed, False)):
            labels = tuple(range(1, 7))
            net = ShownNet(plan.cells, labels, ("red",) * 6, labels[plan.cells.index(plan.base)],
                           tuple(labels[plan.cells.index(c)] for c in plan.order),
                           None if plan.perturb is None else (labels[plan.cells.index(plan.perturb[0])],
                                                              *plan.perturb[1:]))
            assert closes_exactly(net) == folds
    assert all(hexominoes()[x] in valid_pool(depth) and hexominoes()[y] in valid_pool(depth) for x, y in kinds)


# --- what the suite shows -----------------------------------------------------------------------------------------
def shown_by_set(suite_name: str) -> dict[str, list[ShownNet]]:
    """The nets each set of setups (and each other STARE test) of the suite shows, in plan order."""
    suite = load_suite(suite_name)
    sets: dict[str, list[ShownNet]] = defaultdict(list)
    for spec in plan_items(suite):
        item = spec.to_item()
        if spec.test == "net-fold":
            if spec.variant in ("question", "frames", "final-form", "perturbed"):  # one setup of each set
                sets[SETUP_SETS[spec.variant]].append(NET_FOLD.net(item, spec.variant))
        elif spec.test == "net-choice":
            if spec.variant == "image":
                sets["net-choice"] += [ShownNet.from_data(d) for d in item.data["options"]]
        elif spec.variant == "colour":
            sets["net-perception"].append(ShownNet.from_data(item.data["net"]))
    return sets


def test_the_stare_suite_shows_no_net_and_no_step_words_in_two_sets() -> None:
    """On the shipped suite's items: the nets of the six sets are pairwise disjoint (by key: the same net turned,
    mirrored or recoloured has the same key), so are the words of their plans, and within a set no net is shown twice
    but in the perturbed setup, whose couples show every hexomino equally on Yes and No."""
    sets = shown_by_set("stare")
    assert {k: len(v) for k, v in sets.items()} == {"without-vsim": 193, "with-vsim": 120, "final-form": 120,
                                                    "perturbed": 193, "net-choice": 320, "net-perception": 100}
    keys = {name: [net.key for net in nets] for name, nets in sets.items()}
    texts = {name: {net.steps_text() if name != "perturbed" else net.turns_text() for net in nets}
             for name, nets in sets.items()}
    for a, b in itertools.combinations(sets, 2):
        assert not set(keys[a]) & set(keys[b]), (a, b)
        assert not texts[a] & texts[b], (a, b)
    for name, found in keys.items():
        if name != "perturbed":
            assert len(set(found)) == len(found), name


# --- a model server that remembers ---------------------------------------------------------------------------------
GRID = re.compile(r"^[0-9.]+$")


def picture_hash(png: bytes) -> str:
    return hashlib.sha256(png).hexdigest()


class SeenItBefore:
    """A model server with a memory (issue 33's tricks): it remembers every picture (by its bytes), every net it can
    read (a digit block, or a picture through a perfect reader of the drawing: the nets each picture of the run
    shows) and every block of step words, and answers a yes/no question "Yes" exactly when the question shows one of
    them again; among four nets it picks the first it has not seen.  It also reads the final form perfectly (the
    outcome is in sight: GPT-4o's 100) and copies that answer to any later question showing one of the same things.
    Nothing else: it never folds a net."""

    def __init__(self, reader: dict[str, tuple[list[Any], str | None]]) -> None:
        self.reader = reader
        self.memory: set[Any] = set()
        self.known: dict[Any, str] = {}
        self.seen = self.copied = 0

    def things(self, texts: list[str], pictures: list[str]) -> tuple[list[Any], list[Any]]:
        """What a request shows: (everything it could have seen before, the nets in option order)."""
        nets: list[Any] = []
        for picture in pictures:
            nets += self.reader[picture][0]
        lines = [line.strip() for text in texts for line in text.split("\n")]
        blocks = [list(group) for is_grid, group in itertools.groupby(lines, key=lambda line: bool(GRID.match(line)))
                  if is_grid]
        for block in blocks:
            cells = [(r, c) for r, row in enumerate(block) for c, ch in enumerate(row) if ch != "."]
            labels = [int(block[r][c]) for r, c in cells]
            nets.append((shape_id(frozenset(cells)), net_key(cells, labels)))
        steps = "\n".join(line for line in lines if line.startswith("Step ") or line.endswith("stays flat on the table."))
        things = [("picture", p) for p in pictures] + [("net", n) for n in nets]
        return things + ([("steps", steps)] if steps else []), nets

    def __call__(self, request) -> Any:
        from cubebench.agents.llm.testing import Step

        messages = request.body["messages"]
        system = messages[0]["content"]
        content = messages[-1]["content"]
        parts = content if isinstance(content, list) else [{"type": "text", "text": content}]
        texts = [p["text"] for p in parts if p["type"] == "text"]
        pictures = [picture_hash(base64.b64decode(p["image_url"]["url"].split(",", 1)[1]))
                    for p in parts if p["type"] == "image_url"]
        things, nets = self.things(texts, pictures)
        seen = any(t in self.memory for t in things)
        fresh = [k for k, net in enumerate(nets) if ("net", net) not in self.memory]
        copy = next((self.known[t] for t in things if t in self.known), None)
        final = [self.reader[p][1] for p in pictures if self.reader[p][1] is not None]
        self.seen += seen
        self.memory.update(things)
        if final:  # the final form: the answer is in sight, read perfectly
            self.known.update({t: final[0] for t in things})
            return Step.reply(f"Answer: {final[0]}")
        if copy is not None:
            self.copied += 1
            return Step.reply(f"Answer: {copy}")
        if "which net folds" in system.lower():
            return Step.reply(f"<ANSWER> {'ABCD'[fresh[0] if fresh else 0]} </ANSWER>")
        if any("What colour" in text for text in texts):
            return Step.reply("<ANSWER> A </ANSWER>")
        return Step.reply("Answer: Yes" if seen else "Answer: No")


def perfect_reader(suite_path: Path) -> dict[str, tuple[list[Any], str | None]]:
    """Each picture the suite's items send (by the hash of its PNG) -> the nets it shows, in option order, and, for a
    final form, the answer it shows."""
    suite = load_suite(str(suite_path))
    tests = {name: configured_test(name, rules="strict") for name in suite.tests}
    reader: dict[str, tuple[list[Any], str | None]] = {}
    for spec in plan_items(suite):
        item: Item = spec.to_item()
        test = tests[spec.test]
        prompt = test.prompt(item, spec.variant)  # type: ignore[attr-defined]
        if spec.test == "net-fold":
            nets = [NET_FOLD.net(item, spec.variant).key]
        elif spec.test == "net-choice":
            nets = [ShownNet.from_data(d).key for d in item.data["options"]]
        else:
            nets = [ShownNet.from_data(item.data["net"]).key]
        images = [p for p in prompt.parts if not isinstance(p, str)] if prompt.parts else [prompt.image]
        for image in (i for i in images if i is not None):
            reader[picture_hash(png_bytes(image))] = (nets, prompt.gold if spec.variant == "final-form" else None)
    return reader


def memory_suite(tmp_path: Path, items: int, framed: int, others: int) -> Path:
    variants = list(NET_FOLD.variants)
    data = {"schema": "cubebench-questions/1", "name": "stare-memory", "seed": 5, "tests": {
        "net-fold": {"depths": [2], "items": items, "variants": variants,
                     "variant_items": {v: framed for v in variants if SETUP_SETS[v] in ("with-vsim", "final-form")}},
        "net-choice": {"depths": [2], "items": others, "variants": ["image", "text"]},
        "net-perception": {"depths": [2], "items": others, "variants": list(PERCEPTION.variants)}}}
    path = tmp_path / "stare-memory.json"
    path.write_text(json.dumps(data))
    return path


def play_with_memory(tmp_path: Path, suite: Path) -> tuple[SeenItBefore, dict[tuple[str, str], Proportion]]:
    from cubebench.agents.llm.testing import ScriptedServer

    endpoint = SeenItBefore(perfect_reader(suite))
    out = tmp_path / "memory.sqlite"
    with ScriptedServer(endpoint) as srv:
        assert main(["run", "--suite", str(suite), "--agent", f"openai-compatible:{srv.base_url}:seen-it-before",
                     "--protocol", "strict", "--out", str(out), "--no-progress", "--quiet", "--no-images",
                     "--model-attempts", "1"]) == 0
    cells: dict[tuple[str, str], list[bool]] = defaultdict(list)
    with open_run(out) as store:
        for _, record in store.records():
            cells[(record.config["test"], record.config["variant"])].append(bool(record.solved))
    return endpoint, {cell: Proportion(sum(v), len(v)) for cell, v in cells.items()}


def chance(test: str, variant: str) -> float:
    return 0.25 if test == "net-choice" or variant == "colour" else 0.5


def assert_at_chance(endpoint: SeenItBefore, rates: dict[tuple[str, str], Proportion], planned: int) -> None:
    assert sum(r.n for r in rates.values()) == planned
    for (test, variant), rate in rates.items():
        if variant == "final-form":  # the answer is in sight: read, not remembered
            assert rate.k == rate.n
            continue
        lo, hi = rate.interval or (0.0, 1.0)
        assert lo <= chance(test, variant) <= hi, (test, variant, rate.format())
    assert endpoint.copied == 0, "an answer read off a final form was copied to another setup"
    assert endpoint.seen > 0, "the memory never fired: the setups the paper pairs share their nets on purpose"


@needs("openai")
@pytest.mark.slow
def test_an_endpoint_that_remembers_every_picture_net_and_step_text_lands_at_chance(tmp_path: Path) -> None:
    """Through the runner, every cell of a small STARE suite (all 13 net-fold setups, net choice, the probes) but the
    final form it reads is within chance's interval for :class:`SeenItBefore`, which never copies a final form's
    answer; the oracle scores 1.00 on the same items.  (On the first construction it scored every perturbed item and
    every frames-interleaved item.)"""
    suite = memory_suite(tmp_path, items=16, framed=8, others=8)
    endpoint, rates = play_with_memory(tmp_path, suite)
    assert_at_chance(endpoint, rates, load_suite(str(suite)).size)
    oracle = tmp_path / "oracle.sqlite"
    assert main(["run", "--suite", str(suite), "--agent", "oracle", "--out", str(oracle), "--no-progress", "--quiet",
                 "--no-images"]) == 0
    with open_run(oracle) as store:
        assert all(record.solved for _, record in store.records())


@needs("openai")
@pytest.mark.slow
def test_the_remembering_endpoint_lands_at_chance_on_the_whole_stare_suite(tmp_path: Path) -> None:
    """The same endpoint on the shipped ``stare`` suite (2,385 items)."""
    suite = tmp_path / "stare.json"
    suite.write_text(json.dumps(load_suite("stare").to_dict()))
    endpoint, rates = play_with_memory(tmp_path, suite)
    assert_at_chance(endpoint, rates, load_suite("stare").size)


def measure() -> None:
    """Print :class:`SeenItBefore`'s rate per cell on the shipped ``stare`` suite (docs/stare.md)."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        suite = Path(tmp) / "stare.json"
        suite.write_text(json.dumps(load_suite("stare").to_dict()))
        endpoint, rates = play_with_memory(Path(tmp), suite)
    for (test, variant), rate in rates.items():
        print(f"{test} {variant}: {rate.format()} ({rate.k}/{rate.n}; chance {chance(test, variant)})")
    print(f"questions showing something seen before: {endpoint.seen}; final-form answers copied: {endpoint.copied}")


if __name__ == "__main__":
    measure()
