"""Pass rates of SB3 models trained on a partial view (``python -m cubebench.training.rl.sb3 --tier face|vertex``)
by depth, on the starts :mod:`rnn_eval` plays, so they compare with the GRU's:

    python benchmarks/sb3_partial_eval.py runs/sb3_face_lstm/sb3_recurrent-ppo.zip --depths 1 2 3 4 \\
        --episodes 1000 --seed 424242 --certified

Every model and a uniformly random policy (chance) play the same fresh starts of each depth (sub-env ``i`` seeded
``seed + 10_000 d + i``; ``--certified``: drawn by :class:`~cubebench.generators.CertifiedGenerator`, optimal
distance exactly ``d``; else scrambles of ``d`` turns), one episode each with the 20-step budget (view rotations
count as steps), the LSTM state reset at the episode's start.  Greedy (``deterministic=True``) and sampled play,
with Wilson 95 % intervals; ``--json`` writes the table too.  The tier is read off the model's observation space.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

import torch

from cubebench.generators import CertifiedGenerator
from cubebench.tiers import TIER_SPECS
from cubebench.training.rl.rnn_ppo import evaluate_partial
from cubebench.training.rl.sb3_recurrent import evaluate_partial_sb3
from rnn_eval import add_start_options, rate_rows

VISIBLE = {len(spec.visible): name for name, spec in TIER_SPECS.items() if spec.partial}
"""Stickers a partial tier shows, to its name."""


def load(path: Path, algo: str) -> tuple[Any, str]:
    """The model saved at ``path`` by SB3 (``algo``: its class) and the tier it was trained on."""
    cls: Any
    if algo == "recurrent-ppo":
        from sb3_contrib import RecurrentPPO as cls
    else:
        import stable_baselines3

        cls = getattr(stable_baselines3, algo.upper())
    model = cls.load(str(path), device="cpu")
    visible = len(model.observation_space.nvec) - 1 if hasattr(model.observation_space, "nvec") else 0
    if visible not in VISIBLE:
        raise SystemExit(f"{path}: not a model of a partial view's compact form with the previous action")
    return model, VISIBLE[visible]


def main() -> None:
    p = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    p.add_argument("models", type=Path, nargs="+")
    p.add_argument("--algo", default="recurrent-ppo", choices=("recurrent-ppo", "ppo", "a2c", "dqn"))
    add_start_options(p)
    args = p.parse_args()
    torch.set_num_threads(1)
    models = {str(m): load(m, args.algo) for m in args.models}
    tier = next(iter(models.values()))[1]
    if any(t != tier for _, t in models.values()):
        raise SystemExit("the models were trained on different tiers; evaluate each tier apart")
    generator = CertifiedGenerator() if args.certified else None
    rows = []
    players = [("random (chance)", None, True)] + [(name, m, g) for name, (m, _) in models.items() for g in (True, False)]
    for name, model, greedy in players:
        started = time.perf_counter()
        if model is None:
            rates = evaluate_partial(None, tier, args.depths, args.episodes, seed=args.seed, budget=args.budget,
                                     generator=generator)
        else:
            rates = evaluate_partial_sb3(model, tier, args.depths, args.episodes, seed=args.seed, budget=args.budget,
                                         generator=generator, deterministic=greedy)
        play = "uniform" if model is None else "greedy" if greedy else "sampled"
        rows += rate_rows(name, play, rates, args.episodes, time.perf_counter() - started)
    if args.json:
        args.json.write_text(json.dumps({"tier": tier, "certified": args.certified, "seed": args.seed,
                                         "budget": args.budget, "rows": rows}, indent=1) + "\n")


if __name__ == "__main__":
    main()
