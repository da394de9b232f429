"""Pass rates of a policy on fixed instance sets: plain policy and search over its logits.

Everything is batched over instances with the engine's kernels, so a whole
20-per-depth set is one call.  ``eval_instances`` gives the shipped certified
sets (the benchmark's pass-rate tables are measured on them) and falls back
to seeded scrambles, saying so, when a set is not available.
"""

from __future__ import annotations

import argparse
import json
from typing import Callable

import numpy as np
import torch

from cubebench.engine import kernels
from cubebench.engine.facelets import SOLVED
from cubebench.engine.apply import apply_batch
from cubebench.engine.moves import MOVE_INDEX, TABLE
from cubebench.engine.scramble import scramble
from cubebench.engine.state import from_facelets
from cubebench.generators import NoInstanceSetError, shipped_instances

from .mlp_policy import SHIPPED_CHECKPOINT, MLPPolicy, action_names, load_checkpoint

EVAL_SEED = 20260
"""Seed of the fallback scramble sets (depth d uses ``EVAL_SEED + d``)."""


def action_moves(metric: str) -> np.ndarray:
    """Engine move index of each env action."""
    return np.array([MOVE_INDEX[a] for a in action_names(metric)], dtype=np.int64)


def onehot(states: np.ndarray) -> np.ndarray:
    """(B, 54, 6) uint8 one-hot colours of a batch of engine states (the Symbolic observation)."""
    return np.eye(6, dtype=np.uint8)[states // 9]


def solved_mask(states: np.ndarray) -> np.ndarray:
    out = np.zeros(len(states), dtype=np.bool_)
    kernels.batch_is_solved(states, out)
    return out


def apply_actions(states: np.ndarray, moves: np.ndarray) -> None:
    """Apply engine moves in place (``-1`` leaves a state as it is)."""
    apply_batch(states, moves.astype(np.int64), out=states)


def eval_instances(depth: int, metric: str = "quarter", n: int = 20) -> tuple[np.ndarray, str]:
    """(n, 54) start states of depth ``depth`` and where they come from.

    The first ``n`` of the shipped certified set (``benchmarks/instances``,
    optimal distance exactly ``depth``; the same starts the runner uses; a
    depth with fewer positions, like quarter-turn depth 1's 12, gives them
    all), else ``n`` seeded non-redundant scrambles (distance at most
    ``depth``), and the source says which.
    """
    try:
        starts = shipped_instances(metric, depth)[:n]
    except NoInstanceSetError:  # no shipped set for this depth
        starts = ()
    if starts:
        return np.stack([from_facelets(s["state"]) for s in starts]), "certified"
    rng = np.random.default_rng(EVAL_SEED + depth)
    states = np.stack([kernels.apply_moves(SOLVED, TABLE, np.asarray(scramble(depth, metric, rng), np.int64))
                       for _ in range(n)])
    return states, "scramble"


def rollouts(act: Callable[[np.ndarray, np.ndarray], np.ndarray], states: np.ndarray, metric: str = "quarter",
             budget: int = 20) -> tuple[np.ndarray, np.ndarray]:
    """Play ``act(onehot_obs, prev_actions) -> actions`` from each start state for at most ``budget`` moves.

    Returns (solved, moves used) per instance; a solved start counts as 0
    moves.  ``prev_actions`` is -1 before the first move of an episode.
    """
    states = np.array(states, dtype=np.uint8, copy=True)
    moves_of = action_moves(metric)
    prev = np.full(len(states), -1, dtype=np.int64)
    solved = solved_mask(states)
    used = np.zeros(len(states), dtype=np.int64)
    for _ in range(budget):
        active = np.flatnonzero(~solved)
        if active.size == 0:
            break
        acts = np.asarray(act(onehot(states[active]), prev[active]), dtype=np.int64)
        moves = np.full(len(states), -1, dtype=np.int64)
        moves[active] = moves_of[acts]
        apply_actions(states, moves)
        prev[active] = acts
        used[active] += 1
        solved = solved_mask(states)
    return solved, used


def policy_rollouts(policy: MLPPolicy, states: np.ndarray, budget: int = 20, greedy: bool = True,
                    seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """:func:`rollouts` of the MLP policy: greedy (argmax) or sampled with a seeded generator."""
    gen = torch.Generator().manual_seed(seed)
    return rollouts(lambda obs, prev: policy.act(obs, prev, greedy=greedy, generator=gen), states,
                    policy.metric, budget)


@torch.no_grad()
def beam_search(policy: MLPPolicy, state: np.ndarray, width: int = 64, budget: int = 20) -> list[int] | None:
    """Actions of a solution of at most ``budget`` moves found by beam search over the policy's log-probs.

    Each level expands every beam state by every unmasked action, keeps the
    ``width`` most probable distinct states, and stops at the first solved
    one (DeepCubeA-style search with the policy as the learned heuristic).
    ``width=1`` is the greedy policy.  ``None`` when no solution is found.
    """
    moves_of = action_moves(policy.metric)
    states = np.array(state, dtype=np.uint8).reshape(1, 54)
    if solved_mask(states)[0]:
        return []
    score = np.zeros(1)
    prev = np.full(1, -1, dtype=np.int64)
    paths = np.zeros((1, 0), dtype=np.int64)
    for _ in range(budget):
        logits, _ = policy(torch.as_tensor(onehot(states)), torch.as_tensor(prev))
        cand = (torch.as_tensor(score)[:, None] + torch.log_softmax(logits.double(), -1)).numpy()
        flat = cand.reshape(-1)
        order = np.argsort(-flat, kind="stable")
        order = order[np.isfinite(flat[order])][: 4 * width]
        parent, act = np.divmod(order, cand.shape[1])
        nxt = states[parent].copy()
        apply_actions(nxt, moves_of[act])
        _, first = np.unique(nxt, axis=0, return_index=True)
        keep = np.sort(first)[:width]  # distinct states, best score first
        states, score, prev = nxt[keep], flat[order[keep]], act[keep]
        paths = np.concatenate([paths[parent[keep]], act[keep, None]], axis=1)
        done = np.flatnonzero(solved_mask(states))
        if done.size:
            return [int(a) for a in paths[done[0]]]
    return None


def beam_pass_rate(policy: MLPPolicy, states: np.ndarray, width: int, budget: int = 20) -> np.ndarray:
    """Whether beam search of ``width`` solves each start state within ``budget`` moves."""
    return np.array([beam_search(policy, s, width, budget) is not None for s in states], dtype=np.bool_)


def evaluate(policy: MLPPolicy, depths: tuple[int, ...] = (1, 2, 3, 4, 8), budget: int = 20,
             n: int = 20, beam_width: int = 0) -> dict[str, float]:
    """Scalars ``pass/d{depth}`` (greedy policy) and, with ``beam_width``, ``beam{w}/d{depth}``."""
    out: dict[str, float] = {}
    for d in depths:
        states, _ = eval_instances(d, policy.metric, n)
        solved, _ = policy_rollouts(policy, states, budget)
        out[f"pass/d{d}"] = float(solved.mean())
        if beam_width:
            out[f"beam{beam_width}/d{d}"] = float(beam_pass_rate(policy, states, beam_width, budget).mean())
    return out


def pass_rate_table(checkpoint: str, depths: tuple[int, ...], beams: tuple[int, ...], budget: int = 20,
                    seed: int = 0) -> dict[str, dict[str, float]]:
    """Rows ``agent -> {depth: pass rate}``: the policy (greedy and sampled), beam searches over its
    logits, the same searches over an untrained network of the same shape (what search alone
    buys), and a uniformly random agent."""
    policy, _ = load_checkpoint(checkpoint)
    torch.manual_seed(seed)
    untrained = MLPPolicy(policy.n_actions, policy.hidden, policy.metric).eval()
    rng = np.random.default_rng(seed)
    rows: dict[str, dict[str, float]] = {}
    for d in depths:
        states, source = eval_instances(d, policy.metric)
        col = f"d{d} ({source})"
        rows.setdefault("policy, greedy", {})[col] = float(policy_rollouts(policy, states, budget)[0].mean())
        rows.setdefault("policy, sampled", {})[col] = float(
            policy_rollouts(policy, states, budget, greedy=False, seed=seed)[0].mean())
        for w in beams:
            rows.setdefault(f"beam {w} over the policy", {})[col] = float(beam_pass_rate(policy, states, w, budget).mean())
            rows.setdefault(f"beam {w} over an untrained net", {})[col] = float(
                beam_pass_rate(untrained, states, w, budget).mean())
        random_act = lambda obs, prev: rng.integers(policy.n_actions, size=len(obs))  # noqa: E731
        rows.setdefault("random agent", {})[col] = float(rollouts(random_act, states, policy.metric, budget)[0].mean())
    return rows


def main(argv: list[str] | None = None) -> None:
    """``python -m cubebench.agents.rl.evaluate [--checkpoint PT] [--depths ...] [--beams ...]``: a markdown table."""
    p = argparse.ArgumentParser(prog="python -m cubebench.agents.rl.evaluate", description=main.__doc__)
    p.add_argument("--checkpoint", default=str(SHIPPED_CHECKPOINT))
    p.add_argument("--depths", type=int, nargs="+", default=[1, 2, 3, 4, 8])
    p.add_argument("--beams", type=int, nargs="*", default=[16, 256])
    p.add_argument("--json", help="also write the table here")
    args = p.parse_args(argv)
    torch.set_num_threads(1)
    rows = pass_rate_table(args.checkpoint, tuple(args.depths), tuple(args.beams))
    cols = list(next(iter(rows.values())))
    print("| agent | " + " | ".join(cols) + " |")
    print("|---|" + "---|" * len(cols))
    for name, row in rows.items():
        print(f"| {name} | " + " | ".join(f"{row[c]:.2f}" for c in cols) + " |")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(rows, fh, indent=2)


if __name__ == "__main__":
    main()
