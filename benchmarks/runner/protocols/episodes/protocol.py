"""The episodes protocol: an agent acts on a cube through a tier, one episode per planned cell and instance."""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from typing import Any, cast

from cubebench.agents.tools import MAX_ARG_CHARS
from cubebench.budgets import BLIND_SHARE, move_budget
from cubebench.engine import SOLVED, TABLE, kernels
from cubebench.engine.notation import parse_array
from cubebench.envs.cube_env import INTERACTION_STEPS
from cubebench.solver.twophase import solve_twophase
from cubebench.tiers import tier_names

from ...aggregate import cell_of, ordered
from ...answering import chosen_rules, no_question_settings
from ...cli_values import DISTANCE_DEFAULT, csv_values, distance_budget
from ...rows import STORED_COLUMNS
from ...specs import STYLES, AgentFactory, is_model_spec
from ...suite_fields import SuiteError
from ...tables import Table
from ..run_protocol import RunProtocol
from .attribution import attribute
from .exploration import exploration_table
from .floors import blind_floor, run_rules
from .instances import check_classes, instance_draw, resolve_source, source_notes
from .plan import EpisodeRow, EpisodeSpec, plan_episodes
from .play import play_episode
from .report import attribution_table, depth_table, pass_rate_table
from .suite import EPISODE_RULES, SCHEMA, Suite, restrict, suite_from_dict

__all__ = ["EpisodesProtocol", "draw_text", "episode_tables", "budget_text", "warm_two_phase"]

def draw_text(draw: str, seed: int) -> str:
    """What the report and ``compare`` say of a run's instances (:func:`~cubebench.runner.protocols.episodes.instances.instance_draw`)."""
    if draw == "public":
        return f"the public shipped sets (seed {seed}: a model may have them memorised)"
    if draw == "private":
        return (f"a private draw of fresh certified instances (seed {seed}: private while the seed is; up to symmetry "
                "only where no start lies in a public class, as the notes count)")
    if draw == "private-classes":
        return (f"a private draw of fresh certified instances outside every public symmetry class where other classes "
                f"remain (seed {seed}, --private-classes: private while the seed is)")
    return f"seeded scrambles (seed {seed})"




def warm_two_phase() -> None:
    """Build the two-phase solver's tables (the solver agent's, the tools', the perfect seats')."""
    solve_twophase(kernels.apply_moves(SOLVED, TABLE, parse_array("R U F'")))


class EpisodesProtocol(RunProtocol):
    """Episodes on the single-agent tiers (the CubeBench paper's experiments)."""

    name, unit, plays, selector = Suite.protocol, "episode", "plays episodes", "tiers"
    schema = SCHEMA
    refused = "plays no episodes"
    kind_title = "episode suites"
    kept_options = ("tiers", "style", "obs_format", "distance_budget", "no_images", "private_classes")
    run_options = frozenset({"style", "distance_budget", "obs_format", "private_classes"})
    csv_columns = tuple((column, EpisodeRow.words().get(column, column)) for column in STORED_COLUMNS)
    plots = True
    comparable = True

    def read_suite(self, data: Any, source: str) -> Suite:
        return suite_from_dict(data, source=source)

    def add_options(self, group: argparse._ArgumentGroup) -> None:
        group.add_argument("--tiers", type=csv_values(str), default=None, metavar="T1,T2",
                           help="play only these tiers of the suite (e.g. symbolic,face)")
        group.add_argument("--style", choices=STYLES, default=None,
                           help="how an LLM agent acts: react (default), codeact, or policy (one move a call, the "
                                "current state only: the compact policy; sft plays only this way)")
        group.add_argument("--obs-format", choices=("image", "text"), default=None,
                           help=f"what the {tier_names('pictured')} tiers show: image (default) or their text form "
                                "(default for the text-only local model); symbolic is always the 54-letter string; "
                                "question suites: text sends the questions without their images")
        group.add_argument("--distance-budget", type=distance_budget, default=DISTANCE_DEFAULT,
                           metavar="SECONDS|auto",
                           help="exact-solver seconds per step for the true distance shown in the viewer (default 0: "
                                "off; it makes a scripted run 5-60x slower and needs the solver's tables; auto: 0.1 s "
                                "when the tables are on disk); a run that turns it on says so on stderr")
        group.add_argument("--no-images", action="store_true", help="do not store observation images in the run")
        group.add_argument("--private-classes", action="store_true",
                           help="with --seed N (N not 0): draw only starts outside every public symmetry class (a "
                                "shipped start or question item seen from another side or in a mirror), where other "
                                "classes remain: depth 4 and deeper in quarter turns (every class of depths 1-3 is "
                                "public; the instance line counts what a draw holds of them)")

    def configure(self, suite: Suite, config: Any) -> Any:
        """The run's configuration with its rules chosen (``--rules``, else ``paper``): the budget it plays under."""
        no_question_settings(config.agent, config.play, suite.name, rules=True)
        return replace(config, play=replace(config.play, rules=chosen_rules(suite, config.play.rules)))

    def restrict(self, suite: Suite, chosen: list[str] | None, depths: list[int] | None,
                 variants: list[str] | None = None) -> Suite:
        return restrict(suite, chosen, depths)

    def plan(self, suite: Suite, factory: AgentFactory) -> tuple[list[Any], dict[str, Any]]:
        if factory.tiers is not None and not set(suite.tiers) <= set(factory.tiers):
            others = [t for t in suite.tiers if t not in factory.tiers]
            raise SuiteError(f"agent {factory.spec.spec!r} plays only the {', '.join(factory.tiers)} tier(s), not "
                             f"{', '.join(others)}; restrict the suite, e.g. --tiers {','.join(factory.tiers)}")
        check_classes(suite)
        source = resolve_source(suite)
        plan = plan_episodes(suite, source)
        draw = instance_draw(suite)
        print(f"cubebench: {len(plan)} episodes planned, instances: {source}"
              + (f", {draw_text(draw, suite.seed)}" if source == "certified" else ""), file=sys.stderr)
        return list(plan), {"instance_source": source, "instance_notes": source_notes(suite, source),
                            "instance_draw": draw}

    def play(self, spec: Any, factory: AgentFactory, settings: Any) -> Any:
        assert isinstance(spec, EpisodeSpec)
        return play_episode(spec, factory, settings)

    def warm_up(self, metric: str) -> None:
        warm_two_phase()

    def tables(self, store: Any, suite: dict[str, Any], rows: list[Any]) -> list[Table]:
        return episode_tables(store, suite, cast(list[EpisodeRow], rows))

    def setup(self, report: Any) -> list[tuple[str, str]]:
        suite = report.suite
        draw = report.instance_draw or ("public" if report.instance_source == "certified" else "scramble")
        source = (f"certified instances (start distance = certified optimal distance), "
                  f"{draw_text(draw, suite.get('seed', 0))}" if report.instance_source == "certified"
                  else "seeded scrambles of each depth (distance <= depth, not certified)")
        source += "".join(f"; {n}" for n in report.notes)
        rules = run_rules(report.config)
        return [("suite", f"{suite['name']} ({suite.get('metric', '?')}-turn metric, "
                          f"{suite['max_steps']} interaction steps)"),
                ("rules", f"{rules}: {EPISODE_RULES.get(rules, 'unknown here')}"),
                ("budget", budget_text(suite, rules)), ("agent", self.agent_text(report)), ("instances", source)]

    def agent_text(self, report: Any) -> str:
        agent = report.config["agent"]
        return f"{agent['spec']} ({agent['style']})" if is_model_spec(agent["spec"]) else str(agent["spec"])

    def headline(self, report: Any) -> tuple[str, str]:
        """The pass rate, each horizon's apart when the run mixes them (a short and a long horizon pooled into one
        figure says neither's)."""
        return "pass rate", horizon_rates(report.rows, list(report.suite.get("horizons", {})))


def horizon_rates(rows: list[Any], order: list[str]) -> str:
    """``0.74 [0.63, 0.83] (53/72)`` for rows of one horizon; else each horizon's figure, in the suite's order."""
    by_horizon: dict[str, list[Any]] = {}
    for row in rows:
        by_horizon.setdefault(row.horizon, []).append(row)
    if len(by_horizon) <= 1:
        return cell_of(rows).rate.format()
    parts = []
    for horizon in ordered(by_horizon, order):
        cell = cell_of(by_horizon[horizon])
        figure = ("n/a (every episode ended in error)" if cell.errors == cell.rate.n
                  else f"{cell.rate.format()} ({cell.rate.k}/{cell.rate.n})")
        parts.append(f"{horizon} {figure}")
    return "; ".join(parts)


def episode_tables(store: Any, suite: dict[str, Any], rows: list[Any]) -> list[Table]:
    """The paper's tables: pass rate by tier and horizon, by depth, and the failure attribution; then, for the
    partial tiers, how much the agent looked before its first face turn."""
    horizons = list(suite.get("horizons", {"short": [], "long": []}))
    agent = store.get_meta("config")["agent"]["spec"]
    floor = blind_floor(store) if rows else None
    tables = [pass_rate_table(rows, agent, horizons, floor), depth_table(rows, floor)]
    attribution = attribute(store, rows)
    if attribution:
        tables.append(attribution_table(attribution, horizons))
    exploration = exploration_table(store, rows)
    if exploration is not None:
        tables.append(exploration)
    return tables


BLIND_TEXT = (f"(at every depth >= 2 a blind agent solves at most {BLIND_SHARE * 100:g} % of a run's instances, 3.3 % "
              "of generated starts)")
"""What the budget rule guarantees, as the README states it (5 %) and docs/environments.md derives it (3.3 %: the
generator's bound at depth 2, where the plan margin binds; 2.1 % at the other depths)."""


def budget_text(suite: dict[str, Any], rules: str = "strict") -> str:
    """The episodes' move and rotation budgets under ``rules``: none under ``paper``, else as the suite set them."""
    if rules == "paper":
        return (f"no move or view-rotation cap: {suite.get('max_steps', INTERACTION_STEPS)} interaction steps, each one action (a move "
                f"call carries at most {MAX_ARG_CHARS} characters); the blind floor rows show what a blind walk solves so")
    if "max_moves" not in suite:
        return ("not in the suite (a run from before move budgets); each episode's record holds the budget "
                "it ran under (config['env'])")
    metric = suite.get("metric", "quarter")
    unit = "quarter turns" if metric == "quarter" else "face turns"
    rotations = f"{suite.get('max_rotations')} view rotations on {tier_names('partial', titled=True)}"
    moves = suite["max_moves"]
    if moves is not None:
        return f"{moves} {unit} per episode; {rotations}"
    by_budget: dict[int, list[int]] = {}
    for depth in suite.get("depths", []):
        by_budget.setdefault(move_budget(int(depth), metric), []).append(int(depth))
    per_depth = ", ".join(f"{b} at depth{'s' if len(ds) > 1 else ''} {','.join(map(str, ds))}"
                          for b, ds in by_budget.items())
    return f"{unit} per episode by depth {BLIND_TEXT}: {per_depth}; {rotations}"
