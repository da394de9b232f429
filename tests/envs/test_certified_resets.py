"""Certified resets: every env id's depth resets and shipped instances report exact distances."""

from __future__ import annotations

import gymnasium as gym
import pytest

import cubebench
from cubebench.engine import from_facelets, kernels
from cubebench import make_cube_env
from cubebench.generators import CertifiedGenerator, NoInstanceSetError, ScrambleGenerator, shipped_instances
from cubebench.shipped import largest_instance_file


@pytest.mark.parametrize("tier", list(cubebench.TIERS))
@pytest.mark.parametrize("metric,depth", [("quarter", 1), ("quarter", 2), ("half", 3)])
def test_shallow_depths_are_certified_without_the_solver(tier: str, metric: str, depth: int) -> None:
    env = gym.make(cubebench.TIERS[tier], metric=metric, debug=tier != "symbolic")
    _, info = env.reset(seed=depth, options={"depth": depth})
    assert info["distance"] == depth and len(info["scramble"].split()) == depth


@pytest.mark.parametrize("metric", ["quarter", "half"])
def test_shipped_instance_by_index(metric: str) -> None:
    env = gym.make("CubeBench-Symbolic-v0", metric=metric, depth=8)
    _, info = env.reset(options={"instance": 3})
    record = shipped_instances(metric, 8)[3]
    assert info["facelets"] == record["state"] and info["distance"] == 8
    with pytest.raises(ValueError, match="does not exist"):
        env.reset(options={"instance": 10_000})


def test_unreachable_depth_fails_fast() -> None:
    with pytest.raises(ValueError, match="shipped"):
        gym.make("CubeBench-Symbolic-v0", metric="half").reset(options={"depth": 20})


@pytest.mark.slow
@pytest.mark.parametrize("metric,depth", [("quarter", 4), ("quarter", 12), ("half", 4), ("half", 12)])
def test_depth_resets_are_certified_by_the_optimal_solver(metric: str, depth: int) -> None:
    from cubebench.solver.optimal import optimal_distance

    gen = CertifiedGenerator()
    env = gym.make("CubeBench-Symbolic-v0", metric=metric)
    for seed in range(3):
        _, info = env.reset(seed=seed, options={"depth": depth})
        assert info["distance"] == depth
        assert optimal_distance(from_facelets(info["facelets"]), metric) == depth
    import numpy as np

    inst = gen(depth, metric, np.random.default_rng(0))
    assert not kernels.is_solved(inst.state) and inst.distance == depth


@pytest.mark.slow
def test_oracle_reward_matches_the_exact_distance() -> None:
    from cubebench.solver.optimal import optimal_distance

    env = gym.make("CubeBench-Symbolic-v0", reward="oracle", depth=12)
    _, info = env.reset(seed=0)
    assert info["distance"] == 12 and info["phi"] == -12 and info["phi_source"] == "exact"
    total = 0.0
    for a in range(6):
        _, r, _, _, info = env.step(a)
        total += r
        exact = optimal_distance(env.unwrapped.state, "quarter")
        assert info["phi"] == -exact and info["phi_source"] == "exact"
    assert total == pytest.approx(info["phi"] + 12)


def test_a_missing_instance_set_is_a_typed_error() -> None:
    """The runner tells "no certified set behind this" apart from other failures by type, not by message text."""
    with pytest.raises(NoInstanceSetError, match="needs a generator with shipped instance sets"):
        make_cube_env(generator=ScrambleGenerator()).reset(options={"instance": 0})
    with pytest.raises(NoInstanceSetError, match="no shipped quarter-turn instance set for depth 19"):
        shipped_instances("quarter", 19)
    assert largest_instance_file("quarter", 8).name == "quarter-d08-n100.jsonl"
    assert largest_instance_file("half", 20).name == "half-d20-n2.jsonl" and largest_instance_file("half", 19) is None
