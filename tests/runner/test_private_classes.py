"""Private draws up to symmetry (issue 40, item 3): every quarter-turn class of depths 1-3 is a public one, a private
draw's instance line counts its starts that lie in a public class, and ``--private-classes`` keeps them out where
other classes remain.  "Public" is checked independently of the symmetry code: every evaluated position rebuilt in
its 48 spellings from a scramble of it (``helpers.evaluated_images``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import evaluated_images

from cubebench.runner.cli import main
from cubebench.runner.protocols.episodes.instances import drawn_starts
from cubebench.runner.protocols.episodes.private_classes import classes_at, every_class_public, private_class_starts
from cubebench.runner.protocols.episodes.suite import suite_from_dict
from cubebench.runner.report import build_report
from cubebench.runner.store import open_run
from cubebench.runner.suite_fields import SuiteError
from cubebench.runner.trained import ALL_PUBLIC_BELOW

RUN = ["run", "--suite", "exp1", "--tiers", "symbolic", "--depths", "3,4", "--agent", "greedy", "--no-progress",
       "--quiet"]


def test_every_quarter_turn_class_of_depths_1_to_3_is_public() -> None:
    assert [len(classes_at("quarter", d)) for d in (1, 2, 3)] == [1, 5, 25]
    assert all(every_class_public("quarter", d) for d in range(1, ALL_PUBLIC_BELOW["quarter"]))
    assert not every_class_public("quarter", 4)  # not listed: deeper depths hold classes no one evaluates


def test_a_private_draw_says_how_many_starts_lie_in_a_public_class(tmp_path: Path) -> None:
    db = tmp_path / "plain.sqlite"
    assert main([*RUN, "--seed", "7", "--out", str(db)]) == 0
    with open_run(db) as store:
        line = dict(build_report(store).summary().rows)["instances"]
        starts = {spec.depth: [] for spec in store.plan()}
        for spec in store.plan():
            if spec.tier == "symbolic":
                starts[spec.depth].append(spec.reset_options["state"])
    held = evaluated_images()
    public = {d: sum(s in held for s in states) for d, states in starts.items()}
    assert public[3] == 20 and 0 < public[4] < 20
    assert f"depth 3 20 of 20, depth 4 {public[4]} of 20; --private-classes keeps them out" in line


def test_private_classes_keep_every_public_class_out_from_depth_4(tmp_path: Path) -> None:
    db = tmp_path / "classes.sqlite"
    assert main([*RUN, "--seed", "7", "--private-classes", "--out", str(db)]) == 0
    with open_run(db) as store:
        line = dict(build_report(store).summary().rows)["instances"]
        assert store.get_meta("instance_draw") == "private-classes"
        assert store.get_meta("suite")["instance_classes"] == "private"
        depth4 = [s.reset_options["state"] for s in store.plan() if s.depth == 4]
    assert len(depth4) == 20 and not set(depth4) & evaluated_images()
    plain = [s.state for s in drawn_starts(4, "quarter", 7, 20)]
    assert set(depth4) != set(plain)
    assert list(dict.fromkeys(depth4)) == [state for state, _ in private_class_starts(4, "quarter", 7, 20)]
    assert "outside every public symmetry class" in line
    assert "depth 3 20 of 20 (--private-classes cannot keep them out: every quarter-turn class at depth 3 is public)" in line


def test_private_classes_need_a_private_draw_and_stay_with_the_run(tmp_path: Path, capsys) -> None:
    assert main([*RUN, "--private-classes", "--out", str(tmp_path / "public.sqlite")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("cubebench: error: --private-classes keeps a private draw out of the public symmetry")
    assert not (tmp_path / "public.sqlite").exists()
    db = tmp_path / "limited.sqlite"
    assert main([*RUN, "--seed", "3", "--private-classes", "--limit", "1", "--out", str(db)]) == 0
    capsys.readouterr()
    assert main(["run", "--resume", str(db), "--private-classes"]) == 2
    assert "drop --private-classes" in capsys.readouterr().err
    with pytest.raises(SuiteError, match="instance_classes"):  # a suite file's field is checked as any other
        suite_from_dict({"name": "x", "tiers": ["symbolic"], "depths": [4], "instances": 1, "rewards": ["none"],
                         "tool_settings": ["basic"], "instance_classes": "secret"})
