"""How much a partial-view episode looked before it first turned a face: the report's exploration table.

The CubeBench paper puts the failures of its Face and Vertex tiers down to active exploration: an agent that
turns faces before it has looked at the cube plans from what it cannot see.  For each episode of a partial tier
(:attr:`~cubebench.tiers.TierSpec.partial`) this counts, from the actions its record says were executed, the view
rotations taken before its first face turn and how many of the cube's six faces the agent had been shown by then.
An agent is shown the cube at the start of each interaction step, after all of the previous step's actions: a
step that rotates twice (``rotate("y y")``, or a CodeAct block's two calls) shows one view, not two, and
rotations made in the step of the first turn show nothing before it.  (The ideal setting's ``solve_current()``
counts every orientation the cube passed through, within a step too: it asks what was in view, this table what the
agent was shown.)

The held orientation is the engine's: each action's move-table row applied to a state, the faces in view read off
its centres as the episode's toolbox reads them (:class:`~cubebench.agents.tools.Toolbox`).  The count starts from
the solved cube: how many distinct faces a sequence of rotations shows does not depend on how the cube is held at
the start.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Iterable, Sequence

import numpy as np

from cubebench.agents.records import EpisodeRecord
from cubebench.engine import FACE_ACTIONS, MOVE_INDEX, SOLVED, TABLE, VIEW_ACTIONS, kernels
from cubebench.engine.facelets import CENTRES, FACES
from cubebench.tiers import TIER_SPECS, tier_spec, tier_title

from ...aggregate import ordered
from ...store import RunStore
from ...tables import Table, short_number
from .plan import EpisodeRow
from .report import condition_label, conditions
from .suite import TIER_NAMES


@dataclass(frozen=True)
class FirstTurn:
    """What an episode had looked at when it first turned a face (or by its end, when it never did)."""

    rotations: int
    """View rotations (quarter rotations, as the env counts them) before the first face turn."""
    faces_seen: int
    """Distinct faces of the cube the agent was shown before the first face turn (1 to 6)."""
    turned: bool
    """Whether the episode turned a face at all."""


def first_turn(tier: str, steps: Iterable[Sequence[str]]) -> FirstTurn:
    """The rotations taken and faces shown before the first face turn, from ``steps``: each interaction step's
    executed env actions (action names, in order) on the partial tier ``tier``.  ``ValueError`` for a tier that
    shows the whole cube or an action no CubeBench env has."""
    spec = tier_spec(tier)
    if not spec.partial:
        raise ValueError(f"the {tier} tier shows the whole cube: there is nothing to explore")
    held = SOLVED
    seen = _in_view(held, spec.visible_faces)
    rotations = 0
    for actions in steps:
        seen |= _in_view(held, spec.visible_faces)  # the view this step starts from
        for name in actions:
            if name in FACE_ACTIONS:
                return FirstTurn(rotations, len(seen), turned=True)
            if name not in VIEW_ACTIONS:
                raise ValueError(f"{name!r} is not an action of a CubeBench env (face turns "
                                 f"{' '.join(FACE_ACTIONS)}; view rotations {' '.join(VIEW_ACTIONS)})")
            held = kernels.apply_move(held, TABLE, MOVE_INDEX[name])
            rotations += 1
    return FirstTurn(rotations, len(seen), turned=False)


def _in_view(held: np.ndarray, visible_faces: str) -> set[int]:
    """The cube's faces (by their centres' sticker ids) on the held cube's ``visible_faces``."""
    return {int(held[CENTRES[FACES.index(f)]]) // 9 for f in visible_faces}


def executed_actions(record: EpisodeRecord) -> list[list[str]]:
    """The env actions each interaction step of an episode executed, in order (a refused or malformed call
    executed none)."""
    return [[a for call in step.tool_calls for a in call.actions] for step in record.steps]


def exploration_table(store: RunStore, rows: Sequence[EpisodeRow]) -> Table | None:
    """Per condition, partial tier and horizon: the rotations before the first face turn, the faces seen then,
    the share that saw all six and the share that never turned a face; ``None`` for a run with no finished
    partial-tier episode.  Error episodes are left out: they may have stopped before acting."""
    partial = [r for r in rows if r.tier in TIER_SPECS and tier_spec(r.tier).partial and r.status != "error"]
    if not partial:
        return None
    found: dict[tuple[str, str, str, str], list[FirstTurn]] = {}
    unreadable: list[str] = []
    for r in partial:
        try:
            turn = first_turn(r.tier, executed_actions(store.record(r.key)))
        except ValueError as err:  # a record no env wrote: said under the table, not fatal to the report
            unreadable.append(f"{r.key} ({err})")
            continue
        found.setdefault((r.reward, r.setting, r.tier, r.horizon), []).append(turn)
    tiers = ordered((r.tier for r in partial), TIER_NAMES)
    conds = conditions(partial)
    body = [[condition_label(rw, st, conds), tier_title(t), h, *_cells(found[(rw, st, t, h)])]
            for rw, st in conds for t in tiers for h in ordered((r.horizon for r in partial), ("short", "long"))
            if (rw, st, t, h) in found]
    shown = "; ".join(f"{tier_title(t)} shows {len(tier_spec(t).visible_faces)}" for t in tiers)
    left_out = f"; {len(unreadable)} episode(s) left out, the first: {unreadable[0][:200]}" if unreadable else ""
    return Table(
        title="Exploration before the first face turn (partial tiers)",
        header=["condition", "tier", "horizon", "episodes", "rotations: median (mean)", "faces seen (mean)",
                "saw all 6", "never turned"],
        rows=body,
        note=f"rotations: view rotations (x2 counts 2) before an episode's first face turn; faces seen: the cube's "
             f"faces shown at the start of each step up to that turn ({shown}); both, and saw all 6, over the episodes "
             f"that turned a face; never turned: the share that turned none; error episodes left out{left_out}",
    )


def _cells(turns: list[FirstTurn]) -> list[str]:
    """A row's figures: episodes, rotations, faces seen, the share that saw all six, the share that never turned."""
    turned = [t for t in turns if t.turned]
    never = f"{short_number((len(turns) - len(turned)) / len(turns))} ({len(turns) - len(turned)})"
    if not turned:
        return [str(len(turns)), "-", "-", "-", never]
    rotations = [t.rotations for t in turned]
    return [str(len(turns)),
            f"{statistics.median(rotations):g} ({statistics.fmean(rotations):.1f})",
            f"{statistics.fmean(t.faces_seen for t in turned):.1f}",
            short_number(sum(t.faces_seen == len(FACES) for t in turned) / len(turned)),
            never]
