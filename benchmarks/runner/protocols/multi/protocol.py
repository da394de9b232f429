"""The games protocol (``multi``): teams play the multi-agent envs of the games table."""

from __future__ import annotations

import argparse
import sys
from typing import Any, cast

from cubebench.envs.games import GAMES
from cubebench.solver.oracle import oracle

from ...cli_values import csv_values
from ...specs import SEAT_NAMES, TEAMS, AgentFactory, AgentSpec, AgentSpecError, is_model_spec
from ...suite_fields import SuiteError
from ...tables import Table
from ..episodes.protocol import warm_two_phase
from ..run_protocol import RunProtocol, csv_named
from .plan import GameRow, GameSpec, plan_games
from .play import play_game
from .report import multi_tables
from .suite import SCHEMA, MultiSuite, multi_suite_from_dict, restrict_multi

__all__ = ["MultiProtocol"]


class MultiProtocol(RunProtocol):
    """Multi-agent games: every seat played by the run's agent, except seats ``--seat`` gives to a team."""

    name, unit, plays, selector = MultiSuite.protocol, "game", "plays multi-agent games", "games"
    schema = SCHEMA
    refused, seated = "plays no multi-agent game", True
    kind_title, kept_options = "multi-agent suites", ("games", "seat")
    csv_columns = csv_named("key", "game", "depth", "instance", "view", "seat", "passed", "turns", "face_turns")
    """A game's ``turns`` counts seat turns and ``face_turns`` the face turns played; ``seat`` is the seat the
    agent held alone, or ``team``."""

    def read_suite(self, data: Any, source: str) -> MultiSuite:
        return multi_suite_from_dict(data, source=source)

    def add_options(self, group: argparse._ArgumentGroup) -> None:
        group.add_argument("--games", type=csv_values(str), default=None, metavar="G1,G2",
                           help="play only these games (e.g. observer-actor,two-cameras)")
        group.add_argument("--seat", action="append", default=None, metavar="SEAT=TEAM",
                           help="give a seat to a calibration team's player (perfect, silent, random) while --agent "
                                "plays the others, e.g. --seat observer_0=perfect (repeatable)")

    def check_agent(self, spec: AgentSpec) -> None:
        super().check_agent(spec)
        if spec.style == "policy":
            raise AgentSpecError(f"{spec.spec!r} plays the policy style (one move a call on the current state): it "
                                 "plays no multi-agent game, whose model seats talk and act in ReAct style")
        if spec.system_prompt is not None or spec.examples is not None or spec.style != "react":
            raise AgentSpecError("--system-prompt, --examples and --style shape the episode agents; "
                                 "model seats get their role's ReAct-style prompt")
        for seat, team in spec.seats.items():
            if seat not in SEAT_NAMES:
                raise AgentSpecError(f"--seat: unknown seat {seat!r}; the games' seats are {', '.join(SEAT_NAMES)}")
            if team not in TEAMS:
                raise AgentSpecError(f"--seat {seat}={team}: a seat goes to a calibration team's player "
                                     f"({', '.join(TEAMS)}); the model spec (--agent) plays the others")
            solo = next((game for game in GAMES.values() if seat in game.solo_seats), None)
            if solo is not None:
                raise AgentSpecError(f"--seat {seat}: in the {solo.name} game the agent plays each seat in turn "
                                     "against the perfect player; its seats are not given away")

    def restrict(self, suite: MultiSuite, chosen: list[str] | None, depths: list[int] | None,
                 variants: list[str] | None = None) -> MultiSuite:
        return restrict_multi(suite, chosen, depths)

    def plan(self, suite: MultiSuite, factory: AgentFactory) -> tuple[list[Any], dict[str, Any]]:
        """The plan (certified starts of the shipped instance sets); the seats given away are checked here."""
        mute = [name for name in suite.games if not GAMES[name].channel]
        if factory.spec.spec == "silent" and mute:
            raise SuiteError(f"the silent team leaves a channel unused; the {', '.join(mute)} game has none: "
                             "restrict the suite, e.g. --games " + ",".join(g for g in suite.games if g not in mute))
        seats = {seat for game in suite.games for seat in GAMES[game].seats}
        unused = sorted(set(factory.spec.seats) - seats)
        if unused:
            raise SuiteError(f"--seat {', '.join(unused)}: no game of suite {suite.name!r} has such a seat; "
                             f"its seats are {', '.join(sorted(seats))}")
        given_away = [game for game in suite.games if set(GAMES[game].seats) <= set(factory.spec.seats)]
        if given_away:
            raise SuiteError(f"--seat gives every seat of {', '.join(given_away)} away: --agent would play nothing there")
        plan = plan_games(suite)
        print(f"cubebench: {len(plan)} games planned ({', '.join(suite.games)}, {suite.metric}-turn)", file=sys.stderr)
        return list(plan), {"instance_source": "certified"}

    def play(self, spec: Any, factory: AgentFactory, settings: Any) -> Any:
        assert isinstance(spec, GameSpec)
        return play_game(spec, factory, settings.store_images)

    def warm_up(self, metric: str) -> None:
        oracle(metric)  # the scrambler's reward
        warm_two_phase()  # the perfect seats' solver

    def tables(self, store: Any, suite: dict[str, Any], rows: list[Any]) -> list[Table]:
        return multi_tables(store, cast(list[GameRow], rows))

    def setup(self, report: Any) -> list[tuple[str, str]]:
        suite = report.suite
        games = ", ".join(f"{name} ({', '.join(g['views'])})" for name, g in suite["games"].items())
        return [("suite", f"{suite['name']} ({suite.get('metric', '?')}-turn metric; games: {games})"),
                ("agent", self.agent_text(report)), ("starts", "certified instances of each depth (scrambler-solver: solved)")]

    def agent_text(self, report: Any) -> str:
        agent = report.config["agent"]
        given = ", ".join(f"{seat}: {team}" for seat, team in (agent.get("seats") or {}).items())
        return agent["spec"] + (" (a ReAct-style model seat per seat)" if is_model_spec(agent["spec"]) else "") + (
            f"; seats given to a team's player: {given}" if given else "")

    def view(self, config: dict[str, Any], view: dict[str, Any]) -> None:
        turns, seats = config.get("turns"), config.get("seats")
        turns = [t if isinstance(t, dict) else {} for t in turns] if isinstance(turns, list) else []
        seats = seats if isinstance(seats, dict) else {}
        messages = config.get("messages")
        view["multi"] = {"seats": list(seats), "players": seats, "turns": turns, "error": config.get("play_error"),
                         "messages": [m for m in messages if isinstance(m, dict)] if isinstance(messages, list) else []}
