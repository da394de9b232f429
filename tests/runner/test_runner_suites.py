"""Suites as data: the shipped grids, validation, the planner's keys and seeds, instance sources."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from cubebench.runner.protocols.episodes import instances
from cubebench.runner.protocols.episodes.instances import instance_seed, resolve_source
from cubebench.runner.protocols.episodes.plan import episode_key, plan_episodes
from cubebench.runner.protocols.multi.plan import plan_games
from cubebench.runner.suites import SuiteError, available_suites, load_suite, suites_dir
from cubebench.runner.protocols.episodes.suite import suite_from_dict
from cubebench.tiers import TIER_SPECS

GRID = {"tiers": list(TIER_SPECS), "depths": [1, 2, 3, 4, 8, 12, 16, 20]}
"""The full suite: every tier of the registry, in its order (the papers'), at CubeBench's eight depths."""


def test_the_named_suites_ship_and_describe_the_cubebench_grid() -> None:
    assert {"smoke", "exp1", "exp2", "exp3", "full"} <= set(available_suites())
    full = load_suite("full")
    assert list(full.tiers) == GRID["tiers"] and list(full.depths) == GRID["depths"]
    assert full.instances == 20 and full.max_steps == 20 and full.metric == "quarter"
    for name in available_suites():  # every shipped episode suite: moves per depth, 40 rotations (docs/environments.md)
        data = json.loads((suites_dir() / f"{name}.json").read_text())
        if data["schema"] in ("cubebench-questions/1", "cubebench-multi/1"):  # their own tests
            continue
        assert ("max_moves" not in data, data["max_rotations"]) == (True, 40)
        assert [load_suite(name).move_budget(d) for d in (1, 2, 3, 8, 20)] == [5, 5, 22, 40, 40]
    assert set(full.rewards) == {"none", "sticker", "face", "heuristic"}
    assert set(full.tool_settings) == {"basic", "standard", "ideal"}
    assert full.size == 4 * 8 * 20 * 4 * 3
    assert load_suite("exp1").rewards == ("none",) and load_suite("exp1").tool_settings == ("basic",)
    assert set(load_suite("exp2").rewards) == {"none", "sticker", "face", "heuristic"}
    assert load_suite("exp3").tool_settings == ("basic", "standard", "ideal")
    smoke = load_suite("smoke")
    assert smoke.size == 4 * 3 * 2 * 3 and smoke.horizon(8) == "long" and smoke.horizon(3) == "short"


def test_a_user_suite_file_loads_and_round_trips(tmp_path: Path) -> None:
    data = {"name": "mine", "tiers": ["face"], "depths": [2], "instances": 3, "rewards": ["sticker"],
            "tool_settings": ["ideal"], "metric": "half", "seed": 7}
    path = tmp_path / "mine.json"
    path.write_text(json.dumps(data))
    suite = load_suite(str(path))
    assert suite.metric == "half" and suite.size == 3
    assert (suite.max_moves, suite.max_rotations) == (None, 40)  # moves: each depth's own budget
    assert (suite.move_budget(2), suite.move_budget(3)) == (5, 30)  # the half-turn metric's
    assert suite_from_dict(suite.to_dict()) == suite and suite.to_dict()["max_moves"] is None
    assert suite_from_dict({**data, "max_moves": None}) == suite  # null, as a stored suite writes it: per depth
    fixed = suite_from_dict({**data, "max_moves": 12})
    assert (fixed.max_moves, fixed.move_budget(2), fixed.move_budget(20)) == (12, 12, 12)
    assert [spec.max_moves for spec in plan_episodes(load_suite("exp1"), "certified")[::80]] == \
        [5] * 2 + [22] + [40] * 5  # planned depth-major: 48 at depth 1, 80 at each other depth


def test_the_plan_carries_the_suite_budgets_into_every_episode() -> None:
    from cubebench.runner.execute import PlaySettings
    from cubebench.runner.protocols.episodes.play import make_env
    from cubebench.wrappers.description import describe_env

    suite = suite_from_dict({"name": "b", "tiers": ["symbolic", "face"], "depths": [2], "instances": 1,
                             "rewards": ["none"], "tool_settings": ["basic"], "max_moves": 9, "max_rotations": 3})
    for ep in plan_episodes(suite, "certified"):
        described = describe_env(make_env(ep, PlaySettings(obs_format="text")))
        assert (ep.max_moves, described.max_moves) == (9, 9)
        assert described.max_rotations == (3 if ep.tier == "face" else None)


def test_suites_refuse_the_oracle_reward() -> None:
    data = {"name": "x", "tiers": ["face"], "depths": [2], "instances": 1, "rewards": ["none", "oracle"],
            "tool_settings": ["basic"]}
    with pytest.raises(SuiteError, match="oracle reward .* is for RL research"):
        suite_from_dict(data)


@pytest.mark.parametrize("change, message", [
    ({"tiers": ["cube"]}, "tiers"),
    ({"depths": []}, "depths"),
    ({"depths": [1, 1]}, "twice"),
    ({"instances": 0}, "instances"),
    ({"rewards": ["dense"]}, "rewards"),
    ({"tool_settings": ["oracle"]}, "tool_settings"),
    ({"metric": "slice"}, "metric"),
    ({"max_moves": 0}, "max_moves must be an integer >= 1"),
    ({"max_moves": "per depth"}, "max_moves"),
    ({"max_rotations": 2.5}, "max_rotations"),
    ({"colour": "red"}, "unknown field"),
    ({"schema": "other/2"}, "schema"),
])
def test_bad_suites_fail_with_a_message_naming_the_field(change: dict, message: str) -> None:
    data = {"name": "x", "tiers": ["face"], "depths": [2], "instances": 1, "rewards": ["none"],
            "tool_settings": ["basic"], **change}
    with pytest.raises(SuiteError, match=message):
        suite_from_dict(data)


def test_an_unknown_suite_name_lists_the_named_ones() -> None:
    with pytest.raises(SuiteError, match="smoke"):
        load_suite("no-such-suite")


def test_plan_keys_are_unique_and_instances_shared_across_cells() -> None:
    suite = load_suite("smoke")
    plan = plan_episodes(suite, "scramble")
    assert len(plan) == suite.size == len({ep.key for ep in plan})
    assert plan[0].key == episode_key("symbolic", 1, 0, "none", "basic") == "symbolic/d1/i00/none/basic"
    same_instance = [ep for ep in plan if ep.depth == 8 and ep.instance == 1]
    assert len({ep.env_seed for ep in same_instance}) == 1  # one start state for all tiers and settings
    assert len({ep.agent_seed for ep in same_instance}) == len(same_instance)
    assert plan_episodes(suite, "scramble") == plan  # deterministic
    assert instance_seed(0, "quarter", 8, 1) != instance_seed(1, "quarter", 8, 1)


def test_reset_options_follow_the_instance_source() -> None:
    suite = load_suite("smoke")
    scr = plan_episodes(suite, "scramble")[5]
    assert scr.reset_options == {"depth": scr.depth} and scr.certified_distance is None
    for ep in plan_episodes(suite, "certified"):
        assert ep.certified_distance == ep.depth
        assert ep.reset_options in ({"instance": ep.instance}, {"state": ep.reset_options.get("state")})


def test_certified_suites_fall_back_to_scrambles_only_when_allowed(monkeypatch) -> None:
    suite = load_suite("smoke")
    monkeypatch.setattr(instances, "certified_route", lambda d, m, n, seed=0, private_classes=False: ("missing", (), "no set"))
    with pytest.raises(SuiteError, match="certified"):
        resolve_source(suite, warn=False)
    monkeypatch.setattr(instances, "ALLOW_SCRAMBLE_FALLBACK", True)
    assert resolve_source(suite, warn=False) == "scramble"


def test_missing_certified_depths_fail_clearly(monkeypatch) -> None:
    suite = load_suite("exp1")
    monkeypatch.setattr(instances, "certified_route", lambda d, m, n, seed=0, private_classes=False:
                        ("env", (), "") if d < 20 else ("missing", (), "no quarter-d20 file"))
    with pytest.raises(SuiteError, match=r"depth 20: no quarter-d20 file.*--depths 1,2,3,4,8,12,16"):
        resolve_source(suite, warn=False)
    monkeypatch.setattr(instances, "certified_route", lambda d, m, n, seed=0, private_classes=False: ("env", (), ""))
    assert resolve_source(suite, warn=False) == "certified"


def test_shipped_sets_are_read_and_complete_small_depths_are_used_whole(tmp_path: Path) -> None:
    from cubebench.engine import SOLVED, TABLE, kernels, to_facelets
    from cubebench.engine.moves import MOVE_INDEX

    starts = instances.shipped_starts(1, "quarter")
    if not starts:
        pytest.skip("no shipped quarter-turn depth-1 set in benchmarks/instances")
    one_turn = {to_facelets(kernels.apply_move(SOLVED, TABLE, MOVE_INDEX[m]))
                for m in ("U", "U'", "R", "R'", "F", "F'", "D", "D'", "L", "L'", "B", "B'")}
    assert {s.state for s in starts} == one_turn and all(s.distance == 1 for s in starts)
    suite = suite_from_dict({"name": "d1", "tiers": ["symbolic"], "depths": [1], "instances": 20,
                             "rewards": ["none"], "tool_settings": ["basic"]})
    assert len(plan_episodes(suite, resolve_source(suite, warn=False))) == 12
    assert instances.source_notes(suite, "certified") == [
        "depth 1: 12 instances, every position at quarter-turn distance 1 (fewer than 20 exist)"]


def test_a_shipped_file_with_wrong_distances_is_refused(tmp_path: Path) -> None:
    line = {"distance": 3, "index": 0, "metric": "quarter", "scramble": "R", "seed": 0, "solver_version": "x",
            "source": "scramble", "state": "U" * 54}
    (tmp_path / "quarter-d02-n20.jsonl").write_text(json.dumps(line) + "\n")
    with pytest.raises(SuiteError, match="distance 3"):
        instances.shipped_starts(2, "quarter", tmp_path)


def test_every_cell_of_an_instance_starts_from_the_same_state() -> None:
    from cubebench.runner.execute import PlaySettings
    from cubebench.runner.protocols.episodes.play import make_env

    suite = load_suite("smoke")
    plan = plan_episodes(suite, resolve_source(suite, warn=False))
    starts: dict[tuple[int, int], set[str]] = {}
    for ep in plan:
        if ep.depth != 3:
            continue
        env = make_env(ep, PlaySettings(obs_format="text"))
        env.reset(seed=ep.env_seed, options=ep.reset_options)
        starts.setdefault((ep.depth, ep.instance), set()).add(env.unwrapped.facelets)
        env.close()
    assert all(len(s) == 1 for s in starts.values())
    assert len({next(iter(s)) for s in starts.values()}) == len(starts) == suite.instances


def test_restrict_keeps_the_chosen_tiers_and_depths_in_suite_order() -> None:
    from cubebench.runner.protocols.episodes.suite import restrict

    part = restrict(load_suite("exp1"), ["face", "symbolic"], [8, 1])
    assert part.tiers == ("symbolic", "face") and part.depths == (1, 8) and part.name == "exp1[symbolic-face,1-8]"
    assert restrict(load_suite("exp1")) == load_suite("exp1")
    with pytest.raises(SuiteError, match="no depths"):
        restrict(load_suite("smoke"), depths=[2])


def test_a_multi_agent_suite_without_pettingzoo_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pettingzoo", None)  # as on an install without the multi extra
    for name in [m for m in sys.modules if m.startswith("cubebench.envs.multi")]:
        monkeypatch.delitem(sys.modules, name)
    suite = load_suite("multi-smoke")  # it reads (so other commands can refuse it by name), but cannot be planned
    with pytest.raises(SuiteError, match=r'multi-agent suites need PettingZoo: pip install -e "\.\[multi\]" in the CubeBench checkout$'):
        plan_games(suite)
