"""Self-play with the scrambler-versus-solver env: train the MLP solver on positions scramblers find.

``python -m cubebench.training.rl.selfplay --minutes 5 --out runs/selfplay`` (docs/rl.md, section
"Self-play with the scrambler-versus-solver env").  One *round* of the recipe:

1. **Scramble phase, through the env.**  ``games`` games of ``CubeBench-ScramblerSolver-v0``
   (its Parallel form, :func:`~cubebench.envs.multi.make_multi_env`), one env per scramble length
   ``k`` in ``1..frontier + 1``, all sharing one :class:`SelfPlayCurriculum`.  The scrambler seat
   is the ``adversarial`` scrambler by default: among the turns that leave the cube farthest from
   solved (the exact distance, the rule of :class:`~cubebench.agents.teams.GreedyScrambler`), it
   samples the one whose result the *solver's own critic* values lowest (``softmax(-V / T)``), so
   the solver picks the scrambles it expects to fail on.  ``greedy`` is the teams' greedy scrambler
   with a share of uniformly random turns (alone it is deterministic: one position per ``k``),
   ``random`` uniformly random turns (the control: self-play's pipeline without an adversary).
   The solver seat is the MLP policy (greedy) with the evaluation budget of 20 moves, so every
   game is played to its end and its outcome logged.
2. **The curriculum.**  The env computes each scrambled position's exact distance and records it
   in the shared :class:`SelfPlayCurriculum`: the positions and distances come from the env alone.
3. **Training.**  PPO (:class:`~cubebench.training.rl.ppo.PPO`, unchanged) on the native
   :class:`~cubebench.envs.vector_env.CubeVectorEnv` built with ``generator=curriculum``: the
   depth curriculum (:class:`~cubebench.training.rl.schedule.DepthCurriculum`) picks a distance
   for each new episode and the vector env starts it from a self-play position at exactly that
   distance (with ``--share`` below 1, only that share of the episodes; the others start from
   seeded random scrambles, :class:`MixedStarts`).  ``updates`` PPO updates, then the next
   round's scrambles (against the updated critic).

The policy starts from the shipped checkpoint (fine-tuning, the default) or from scratch
(``--scratch``).  At the end both the trained policy and the shipped checkpoint are evaluated in
the same process on the shipped certified instance sets (:func:`~cubebench.agents.rl.evaluate.evaluate`):
greedy pass rates per depth, and beam search with ``--beam``.  The run folder gets ``last.pt``
(loadable as ``mlp:<path>``), ``scalars.jsonl``, ``config.json`` and ``result.json``.
"""

from __future__ import annotations

from cubebench.extras import install_hint
import argparse
import json
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import torch
from gymnasium.vector import AutoresetMode
from tqdm import tqdm

from cubebench.agents.teams import GreedyScrambler, play_team
from cubebench.engine import TABLE, kernels
from cubebench.engine.moves import MOVE_INDEX
from cubebench.engine.state import from_colour_indices
from cubebench.envs.games import SCRAMBLER_SOLVER
from cubebench.envs.vector_env import CubeVectorEnv
from cubebench.generators import Generator, Instance, ScrambleGenerator
from cubebench.tasks.items import MAX_DEPTH
from cubebench.solver.oracle import oracle

from cubebench.agents.rl.evaluate import evaluate, onehot, policy_rollouts
from cubebench.agents.rl.mlp_policy import SHIPPED_CHECKPOINT, MLPPolicy, action_names, load_checkpoint, save_checkpoint
from .ppo import PPO, PPOConfig
from .schedule import DepthCurriculum
from .train import EVAL_DEPTHS, ScalarLog

GAME_ID = SCRAMBLER_SOLVER.env_id
SCRAMBLER, SOLVER = SCRAMBLER_SOLVER.seats
SCRAMBLERS = ("adversarial", "greedy", "random")
SOLVE_BUDGET = 20
"""The solver's move budget in the games: the evaluation budget of every pass-rate table."""


def _multi() -> Any:
    """``cubebench.envs.multi`` (PettingZoo, the ``multi`` extra), with a message that names the extra."""
    try:
        from cubebench.envs import multi
    except ModuleNotFoundError as err:
        raise ModuleNotFoundError("self-play uses the scrambler-versus-solver env, which needs PettingZoo: "
                                  f"{install_hint('multi')}", name=err.name) from err
    return multi


# --- the seats ---------------------------------------------------------------------------------


class AdversarialScrambler:
    """Scrambler seat: a farthest-from-solved turn, chosen to minimise the solver's own value estimate.

    Each scramble turn it computes the exact distance after every turn (as the greedy scrambler
    does), keeps the turns that reach the largest, and samples among them with probability
    ``softmax(-V(s') / temperature)``, ``V`` the solver's critic: the solver's belief about where
    it will fail picks the scramble.  It reads only its own (Symbolic one-hot) observation.
    """

    def __init__(self, names: Sequence[str], metric: str, policy: MLPPolicy, temperature: float = 0.05,
                 seed: int = 0) -> None:
        if temperature <= 0:
            raise ValueError(f"the scrambler's temperature must be > 0, got {temperature}")
        self.names, self.metric, self.policy = tuple(names), metric, policy
        self.temperature = float(temperature)
        self.rng = np.random.default_rng(seed)

    def reset(self) -> None:
        """Nothing to forget between games (the generator runs on, so games differ)."""

    @torch.no_grad()
    def act(self, observation: dict[str, Any], info: dict[str, Any]) -> int:
        if observation["phase"] != 0:
            return 0
        state = from_colour_indices(np.asarray(observation["view"]).argmax(axis=1).astype(np.uint8))
        nxt = np.stack([kernels.apply_move(state, TABLE, MOVE_INDEX[name]) for name in self.names[1:]])
        exact = oracle(self.metric)
        distance = np.array([exact.distance(s) for s in nxt])
        far = np.flatnonzero(distance == distance.max())
        _, value = self.policy(torch.as_tensor(onehot(nxt[far])))
        weights = torch.softmax(-value.double() / self.temperature, 0).numpy()
        return 1 + int(far[self.rng.choice(len(far), p=weights / weights.sum())])


class EpsilonGreedyScrambler:
    """The teams' :class:`~cubebench.agents.teams.GreedyScrambler`, with a share ``epsilon`` of uniformly
    random turns (the greedy rule alone always makes the same scramble from the solved cube)."""

    def __init__(self, names: Sequence[str], metric: str, epsilon: float = 0.3, seed: int = 0) -> None:
        if not 0.0 <= epsilon <= 1.0:
            raise ValueError(f"epsilon must lie in [0, 1], got {epsilon}")
        self.greedy = GreedyScrambler(tuple(names), metric)
        self.n, self.epsilon = len(names), float(epsilon)
        self.rng = np.random.default_rng(seed)

    def reset(self) -> None:
        self.greedy.reset()

    def act(self, observation: dict[str, Any], info: dict[str, Any]) -> int:
        if observation["phase"] == 0 and self.rng.random() < self.epsilon:
            return int(self.rng.integers(1, self.n))
        return int(self.greedy.act(observation, info))


class PolicySolver:
    """Solver seat: the MLP policy (greedy) on the Symbolic one-hot view; passes in the scramble phase."""

    def __init__(self, names: Sequence[str], policy: MLPPolicy) -> None:
        order = action_names(policy.metric)
        missing = [a for a in order if a not in names]
        if missing:
            raise ValueError(f"the solver seat has no turns {missing}: the policy plays the {policy.metric} metric")
        self.policy = policy
        self.seat_action = np.array([list(names).index(a) for a in order], dtype=np.int64)
        self.prev = -1

    def reset(self) -> None:
        self.prev = -1

    def act(self, observation: dict[str, Any], info: dict[str, Any]) -> int:
        if observation["phase"] == 0:
            return 0
        view = np.asarray(observation["view"], dtype=np.uint8)[None]
        action = int(self.policy.act(view, np.array([self.prev], dtype=np.int64))[0])
        self.prev = action
        return int(self.seat_action[action])


def make_scrambler(kind: str, game: Any, policy: MLPPolicy, seed: int = 0, temperature: float = 0.05,
                   epsilon: float = 0.3) -> Any:
    """The scrambler seat ``kind`` (``adversarial``, ``greedy`` or ``random``) for the game ``game``."""
    names, metric = game.action_names(SCRAMBLER), game.cube.metric
    if kind == "adversarial":
        return AdversarialScrambler(names, metric, policy, temperature, seed)
    if kind == "greedy":
        return EpsilonGreedyScrambler(names, metric, epsilon, seed)
    if kind == "random":  # every turn uniform (the teams' RandomSeat re-seeds at each reset: one scramble)
        return EpsilonGreedyScrambler(names, metric, 1.0, seed)
    raise ValueError(f"unknown scrambler {kind!r}; expected one of {SCRAMBLERS}")


# --- the scramble phase ------------------------------------------------------------------------


@dataclass
class GameRecord:
    """One game of the env: scramble length, the exact distance the env found, and the outcome."""

    k: int
    distance: int
    outcome: str
    scrambler_return: float


@dataclass
class ScramblePhase:
    """Plays games of the scrambler-versus-solver env, one env per scramble length, into one curriculum."""

    policy: MLPPolicy
    curriculum: Any
    scrambler: str = "adversarial"
    metric: str = "quarter"
    seed: int = 0
    temperature: float = 0.05
    epsilon: float = 0.3
    _envs: dict[int, tuple[Any, dict[str, Any]]] = field(default_factory=dict)
    _games: int = 0

    def __post_init__(self) -> None:
        if self.scrambler not in SCRAMBLERS:
            raise ValueError(f"unknown scrambler {self.scrambler!r}; expected one of {SCRAMBLERS}")

    def env(self, k: int) -> tuple[Any, dict[str, Any]]:
        """The Parallel env that scrambles ``k`` moves, and its seats (built once per ``k``)."""
        if k not in self._envs:
            game = _multi().make_multi_env(GAME_ID, parallel=True, tier="symbolic", scramble_moves=k,
                                           metric=self.metric, max_moves=SOLVE_BUDGET,
                                           max_cycles=k + SOLVE_BUDGET + 1, curriculum=self.curriculum)
            seats = {SCRAMBLER: make_scrambler(self.scrambler, game, self.policy, self.seed + k,
                                                   self.temperature, self.epsilon),
                     SOLVER: PolicySolver(game.action_names(SOLVER), self.policy)}
            self._envs[k] = (game, seats)
        return self._envs[k]

    def play(self, lengths: Sequence[int]) -> list[GameRecord]:
        """One game per entry of ``lengths`` (scramble lengths); the env records every position it reaches."""
        records = []
        was_training = self.policy.training
        self.policy.eval()
        try:
            for k in lengths:
                if int(k) < 1:
                    raise ValueError(f"a scramble length is >= 1, got {k}")
                game, seats = self.env(int(k))
                outcome = play_team(game, seats, seed=self.seed * 1_000_003 + self._games)
                self._games += 1
                info = outcome.infos[SCRAMBLER]
                records.append(GameRecord(int(k), int(info["distance"]), str(info["outcome"]),
                                          float(outcome.returns[SCRAMBLER])))
        finally:
            self.policy.train(was_training)
        return records


def heldout_positions(policy: MLPPolicy, depths: Sequence[int], n: int, seed: int = 10_000,
                      scrambler: str = "random") -> dict[int, tuple[np.ndarray, list[str]]]:
    """Fresh positions from the env at exact distance ``d``: ``{d: (states (m, 54), scrambles)}``, ``m <= n``.

    Games of ``d``-move scrambles by ``scrambler`` (default: uniformly random turns) with a seed the
    default training runs do not use (theirs are ``--seed + k``); a position is kept when the env finds its exact distance equal to ``d``.  Unlike
    the certified sets (drawn by the native scrambler, which never turns one face twice in a row),
    these include positions such as ``U U`` that self-play reaches.  At most ``4 n`` games per depth.
    """
    out: dict[int, tuple[np.ndarray, list[str]]] = {}
    for d in depths:
        if not 1 <= d <= MAX_DEPTH[policy.metric]:
            raise ValueError(f"held-out depths lie in 1..{MAX_DEPTH[policy.metric]} (exact distances from the "
                             f"oracle's tables), got {d}")
        kept: dict[bytes, tuple[np.ndarray, str]] = {}
        recorder = _LastRecord()
        phase = ScramblePhase(policy, recorder, scrambler, policy.metric, seed + d)
        for _ in range(4 * n):
            if len(kept) >= n:
                break
            phase.play([d])
            state, scramble, distance = recorder.last
            if distance == d:
                kept.setdefault(state.tobytes(), (state, scramble))
        states = [v[0] for v in kept.values()]
        out[d] = (np.stack(states) if states else np.zeros((0, 54), np.uint8), [v[1] for v in kept.values()])
    return out


class _LastRecord:
    """The env's curriculum for held-out games: keeps the last position the env records, exact distance
    included (the env calls only ``record``), and passes it on to a :class:`SelfPlayCurriculum`."""

    def __init__(self) -> None:
        self.curriculum = _multi().SelfPlayCurriculum()
        self.last: tuple[np.ndarray, str, int] = (np.zeros(54, np.uint8), "", -1)

    def record(self, state: np.ndarray, scramble: str, distance: int, metric: Any) -> None:
        self.last = (np.array(state, dtype=np.uint8), scramble, int(distance))
        self.curriculum.record(state, scramble, distance, metric)


def game_stats(records: Sequence[GameRecord]) -> dict[str, float]:
    """Scalars of a batch of games: the solver's in-game pass rate per distance and the scrambler's return."""
    solved: dict[int, list[bool]] = defaultdict(list)
    for r in records:
        solved[r.distance].append(r.outcome == "solved")
    out = {f"game/solved_d{d}": float(np.mean(v)) for d, v in sorted(solved.items())}
    if records:
        out["game/scrambler_return"] = float(np.mean([r.scrambler_return for r in records]))
    return out


class MixedStarts:
    """Start-state generator: a self-play position with probability ``share``, else a seeded scramble.

    The shipped policy learnt from millions of distinct random scrambles; a self-play pool grows
    by one position per game (Python speed), so PPO reuses each position many times.  Mixing keeps
    the broad distribution and adds what self-play found (hard-example mining), the same draw from
    each sub-env's own generator.
    """

    def __init__(self, curriculum: Any, share: float, fallback: Generator | None = None) -> None:
        if not 0.0 <= share <= 1.0:
            raise ValueError(f"the self-play share must lie in [0, 1], got {share}")
        self.curriculum, self.share = curriculum, float(share)
        self.fallback = fallback if fallback is not None else ScrambleGenerator()

    def __call__(self, depth: int, metric: str, rng: np.random.Generator) -> Instance:
        if rng.random() < self.share:
            return self.curriculum(depth, metric, rng)
        return self.fallback(depth, metric, rng)


# --- the trainer -------------------------------------------------------------------------------


class SelfPlayTrainer:
    """Alternates the env's scramble phase and PPO updates on the positions it found (see the module doc)."""

    def __init__(self, policy: MLPPolicy, curriculum: Any | None = None, *, scrambler: str = "adversarial",
                 num_envs: int = 512, max_depth: int = 9, frontier: int = 1, promote_at: float = 0.7,
                 horizon: int = 4, games: int = 64, cfg: PPOConfig | None = None, seed: int = 0,
                 temperature: float = 0.05, epsilon: float = 0.3, share: float = 1.0) -> None:
        if not 1 <= frontier <= max_depth:
            raise ValueError(f"the start frontier must lie in 1..max_depth={max_depth}, got {frontier}")
        if games < 1 or num_envs < 1:
            raise ValueError(f"games and num_envs must be >= 1, got {games} and {num_envs}")
        self.policy, self.games, self.max_depth = policy, int(games), int(max_depth)
        self.curriculum = curriculum if curriculum is not None else _multi().SelfPlayCurriculum()
        self.scramble = ScramblePhase(policy, self.curriculum, scrambler, policy.metric, seed, temperature, epsilon)
        self.depths = DepthCurriculum(max_depth=frontier, frontier=frontier, promote_at=promote_at,
                                      min_episodes=max(200, num_envs // 2))
        self.rng = np.random.default_rng(seed)
        self.records: list[GameRecord] = []
        self.fill()  # PPO's first reset draws from the curriculum: it must hold every depth up to the frontier
        starts = self.curriculum if share == 1.0 else MixedStarts(self.curriculum, share)
        env = CubeVectorEnv(num_envs, metric=policy.metric, max_steps=SOLVE_BUDGET, generator=starts,
                            autoreset_mode=AutoresetMode.SAME_STEP)
        self.ppo = PPO(policy, env, self.depths, cfg or PPOConfig(), seed=seed, horizon=horizon)

    def covered(self) -> int:
        """The largest ``d`` such that the curriculum holds positions at every distance ``1..d``."""
        counts, d = self.curriculum.counts(self.policy.metric), 0
        while counts.get(d + 1, 0) > 0:
            d += 1
        return d

    def fill(self) -> list[GameRecord]:
        """One scramble phase: ``games`` games, lengths uniform over ``1..frontier + 1`` (and more games,
        up to ``4 * games``, until every distance up to the frontier has a position)."""
        top = min(self.depths.frontier + 1, self.max_depth)
        records = self.scramble.play(self.rng.integers(1, top + 1, size=self.games).tolist())
        extra = 0
        while self.covered() < self.depths.frontier and extra < 4 * self.games:
            records += self.scramble.play([self.covered() + 1])
            extra += 1
        if self.covered() < self.depths.frontier:
            raise RuntimeError(f"the {self.scramble.scrambler} scrambler found no position at distance "
                               f"{self.covered() + 1} in {extra} extra games (found {self.curriculum.counts()})")
        self.depths.max_depth = min(self.max_depth, self.covered())  # never promote past what self-play found
        self.records += records
        return records

    def round(self, updates: int) -> dict[str, float]:
        """A scramble phase and then ``updates`` PPO updates; the scalars to log (the last update's)."""
        stats = game_stats(self.fill())
        for _ in range(updates):
            stats.update(self.ppo.update())
        stats["curriculum/positions"] = float(len(self.curriculum))
        stats["curriculum/hardest"] = float(self.curriculum.hardest(self.policy.metric))
        return stats

    @property
    def env_steps(self) -> int:
        return self.ppo.env_steps


# --- the command -------------------------------------------------------------------------------


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m cubebench.training.rl.selfplay", description=__doc__.split("\n\n")[0])
    p.add_argument("--scrambler", choices=SCRAMBLERS, default="adversarial", help="the scrambler seat")
    p.add_argument("--checkpoint", type=Path, default=SHIPPED_CHECKPOINT,
                   help="fine-tune this checkpoint (default: the shipped one)")
    p.add_argument("--scratch", action="store_true", help="start from an untrained policy instead")
    p.add_argument("--hidden", type=int, nargs="+", default=[512, 256], help="layer widths (with --scratch)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--minutes", type=float, default=5.0, help="wall-clock training budget (0: no training, only the evaluation)")
    p.add_argument("--rounds", type=int, default=0, help="stop after this many rounds (0: no limit)")
    p.add_argument("--games", type=int, default=64, help="games of the env per round")
    p.add_argument("--updates", type=int, default=4, help="PPO updates per round")
    p.add_argument("--max-depth", type=int, default=9,
                   help="longest scramble / highest curriculum distance (the oracle is table-exact up to 9)")
    p.add_argument("--frontier", type=int, default=0,
                   help="starting curriculum frontier (0: the checkpoint's, or 1 with --scratch)")
    p.add_argument("--promote-at", type=float, default=0.7)
    p.add_argument("--horizon", type=int, default=4, help="training episodes end after frontier + HORIZON moves")
    p.add_argument("--temperature", type=float, default=0.05, help="adversarial scrambler: softmax temperature")
    p.add_argument("--epsilon", type=float, default=0.3, help="greedy scrambler: share of random turns")
    p.add_argument("--share", type=float, default=1.0,
                   help="share of training episodes that start from self-play positions (the rest: seeded "
                        "random scrambles, as the shipped policy trained on; 0 is the no-self-play control)")
    p.add_argument("--num-envs", type=int, default=512)
    p.add_argument("--n-steps", type=int, default=16)
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--minibatch", type=int, default=2048)
    p.add_argument("--lr", type=float, default=5e-4)
    p.add_argument("--ent-coef", type=float, default=0.01)
    p.add_argument("--eval-depths", type=int, nargs="+", default=list(EVAL_DEPTHS))
    p.add_argument("--eval-n", type=int, nargs="+", default=[20],
                   help="instances per depth (the first N of each certified set; 20 is the docs' tables)")
    p.add_argument("--beam", type=int, default=0, help="also evaluate beam search of this width (0: no)")
    p.add_argument("--heldout", type=int, default=0,
                   help="also evaluate (greedy) on this many fresh env positions per depth from uniformly random "
                        "scrambles at exact distance d (0: no)")
    p.add_argument("--out", type=Path, default=Path("runs/selfplay"))
    p.add_argument("--threads", type=int, default=1, help="torch threads (1 is fastest on 2 shared cores)")
    p.add_argument("--no-progress", action="store_true")
    args = p.parse_args(argv)
    for name in ("games", "updates", "num_envs", "n_steps", "epochs", "minibatch", "threads"):
        if getattr(args, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be >= 1, got {getattr(args, name)}")
    if not 1 <= args.max_depth <= 9:
        p.error(f"--max-depth must lie in 1..9 (exact distances from the oracle's tables), got {args.max_depth}")
    if not 0 <= args.frontier <= args.max_depth:
        p.error(f"--frontier must lie in 0..--max-depth={args.max_depth}, got {args.frontier}")
    if not 0.0 <= args.share <= 1.0:
        p.error(f"--share must lie in [0, 1], got {args.share}")
    if args.minutes < 0 or args.rounds < 0:
        p.error("--minutes and --rounds must be >= 0")
    if args.heldout < 0:
        p.error(f"--heldout must be >= 0, got {args.heldout}")
    if any(n < 1 for n in args.eval_n) or any(d < 1 for d in args.eval_depths):
        p.error("--eval-n and --eval-depths must be >= 1")
    if not args.scratch and not args.checkpoint.is_file():
        p.error(f"--checkpoint {args.checkpoint} does not exist (or pass --scratch)")
    return args


def initial_policy(args: argparse.Namespace) -> tuple[MLPPolicy, int, str]:
    """The policy to train (from ``--checkpoint`` or untrained), its start frontier and where it came from."""
    torch.manual_seed(args.seed)
    if args.scratch:
        return MLPPolicy(len(action_names("quarter")), tuple(args.hidden), "quarter"), args.frontier or 1, "scratch"
    policy, meta = load_checkpoint(args.checkpoint)
    policy.train()
    frontier = args.frontier or int(meta.get("frontier", 1))
    return policy, max(1, min(frontier, args.max_depth)), str(args.checkpoint)


def compare(trained: MLPPolicy, baseline: MLPPolicy, depths: Sequence[int], ns: Sequence[int],
            beam: int = 0, heldout: int = 0) -> dict[str, dict[str, float]]:
    """Pass rates of both policies on the certified sets, ``{"<who> n=<N>": {"pass/dD": ..., "beamW/dD": ...}}``,
    and with ``heldout`` (greedy) on that many fresh env positions per depth (:func:`heldout_positions`),
    ``{"<who> heldout": {"pass/dD": ...}}``."""
    out: dict[str, dict[str, float]] = {}
    for policy in (baseline, trained):
        policy.eval()
    for n in ns:
        for who, policy in (("shipped", baseline), ("selfplay", trained)):
            out[f"{who} n={n}"] = evaluate(policy, tuple(depths), budget=SOLVE_BUDGET, n=n, beam_width=beam)
    if heldout:
        sets = heldout_positions(baseline, [d for d in depths if d <= 9], heldout)
        for who, policy in (("shipped", baseline), ("selfplay", trained)):
            out[f"{who} heldout"] = {f"pass/d{d}": float(policy_rollouts(policy, states, SOLVE_BUDGET)[0].mean())
                                     for d, (states, _) in sets.items() if len(states)}
    return out


def train(args: argparse.Namespace) -> dict[str, Any]:
    """Run the recipe, save ``last.pt``, evaluate it against the shipped checkpoint; the result."""

    torch.set_num_threads(args.threads)
    policy, frontier, source = initial_policy(args)
    cfg = PPOConfig(n_steps=args.n_steps, epochs=args.epochs, minibatch=args.minibatch, lr=args.lr,
                    ent_coef=args.ent_coef)
    log = ScalarLog(args.out)
    meta: dict[str, Any] = {"args": {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items()},
                            "init": source}
    (args.out / "config.json").write_text(json.dumps(meta, indent=2))
    t0 = time.perf_counter()
    trainer = SelfPlayTrainer(policy, scrambler=args.scrambler, num_envs=args.num_envs, max_depth=args.max_depth,
                              frontier=frontier, promote_at=args.promote_at, horizon=args.horizon,
                              games=args.games, cfg=cfg, seed=args.seed, temperature=args.temperature,
                              epsilon=args.epsilon, share=args.share)
    deadline, rounds = t0 + 60 * args.minutes, 0
    bar = tqdm(unit="round", disable=args.no_progress)
    while time.perf_counter() < deadline and not (args.rounds and rounds >= args.rounds):
        stats = trainer.round(args.updates)
        rounds += 1
        log.write(trainer.env_steps, stats)
        bar.update(1)
        bar.set_postfix(frontier=trainer.depths.frontier, positions=len(trainer.curriculum),
                        success=f"{stats.get('train/success', float('nan')):.2f}")
    bar.close()
    wall = round(time.perf_counter() - t0, 1)
    info = {**meta, "env_steps": trainer.env_steps, "rounds": rounds, "games": len(trainer.records),
            "frontier": trainer.depths.frontier, "positions": trainer.curriculum.counts(policy.metric), "wall_s": wall}
    save_checkpoint(policy, args.out / "last.pt", info)
    baseline, _ = load_checkpoint(SHIPPED_CHECKPOINT)
    result = {**info, "eval": compare(policy, baseline, args.eval_depths, args.eval_n, args.beam, args.heldout),
              "games_by_distance": game_stats(trainer.records)}
    log.write(trainer.env_steps, {f"eval/{k}/{m}": v for k, row in result["eval"].items() for m, v in row.items()})
    log.close()
    (args.out / "result.json").write_text(json.dumps(result, indent=2))
    return result


def table(result: dict[str, Any]) -> str:
    """The evaluation of a result as a markdown table (rows: policy and instance count; columns: depth)."""
    rows = result["eval"]
    cols = list(next(iter(rows.values())))
    lines = ["| policy | " + " | ".join(cols) + " |", "|---|" + "---:|" * len(cols)]
    lines += [f"| {name} | " + " | ".join(f"{row[c]:.2f}" for c in cols) + " |" for name, row in rows.items()]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    result = train(args)
    print(f"{result['rounds']} rounds, {result['games']} games, {result['env_steps']} env steps, "
          f"{result['wall_s']} s; frontier {result['frontier']}; positions by distance {result['positions']}")
    print(table(result))


if __name__ == "__main__":
    main()
