"""The tables of a multi-agent run: team pass rates, message statistics, each seat's turns, the scrambles.

* **Team pass rate**, a row per game and view, a column per depth (the scrambler-solver game: per
  scramble length, the solver's pass rate), each a pass rate with its Wilson 95 % interval.
* **Messages**, a row per game and view: messages per game, characters per message, the share of
  games in which nobody spoke, the share of a game's messages sent by each seat, refused actions,
  turns and face turns per game.
* **Seats**, a row per game and seat: turns played, how many were model calls, malformed replies,
  failed calls, tokens, messages sent.
* **Scrambles** (scrambler-solver games): the exact optimal distance the scrambler reached per
  scramble length k, against k.
"""

from __future__ import annotations

from collections import defaultdict
from statistics import mean
from typing import Any

from cubebench.agents.records import EpisodeRecord
from cubebench.envs.games import GAMES

from ...aggregate import group
from ...store import RunStore
from ...tables import ALL_ERRORS_NOTE, Table, all_errors, rate_text
from .plan import GameRow


def multi_tables(store: RunStore, rows: list[GameRow]) -> list[Table]:
    """The report's tables of a multi-agent run (see the module docstring)."""
    records = [record for _, record in store.records()]
    tables = [team_table(rows), message_table(records), seat_table(records)]
    scrambles = [r for r in records if _scrambles(r.config.get("game"))]
    if scrambles:
        tables.append(scramble_table(scrambles))
    return tables


def _scrambles(game: object) -> bool:
    """Whether a record's game starts from its scrambler's scramble (its table of scrambles applies)."""
    row = GAMES.get(game) if isinstance(game, str) else None
    return row is not None and row.scrambler is not None


def team_table(rows: list[GameRow]) -> Table:
    """Pass rate per game (and the agent's seat, where it plays one) and view (rows) and depth (columns)."""
    depths = sorted({r.depth for r in rows})
    cells = group(rows, lambda r: (_game(r.game, r.seat), r.view, r.depth))
    overall = group(rows, lambda r: (_game(r.game, r.seat), r.view))
    body = []
    for game, view in sorted(overall):
        cell = [rate_text(cells[(game, view, d)]) if (game, view, d) in cells else "" for d in depths]
        body.append([game, view, *cell, rate_text(overall[(game, view)])])
    return Table(title="Team pass rate", header=["game", "view", *[f"d{d}" for d in depths], "all"], rows=body,
                 note="A game passes when the cube ends solved within the move budget. Scrambler-solver (depth: the "
                      "scramble length k): the agent plays one seat against the perfect player; as solver_0 it passes "
                      "by solving, as scrambler_0 by reaching the largest exact distance, k. "
                      "Pass rate [Wilson 95 % interval]"
                      + (f"; {ALL_ERRORS_NOTE.format(unit='game')}." if any(all_errors(c) for c in cells.values()) else "."))


def _game(game: str, setting: str) -> str:
    """A row's game label: the game, and the seat the agent played where it played one."""
    return game if setting == "team" else f"{game} as {setting}"


def message_table(records: list[EpisodeRecord]) -> Table:
    """Message and turn statistics per game and view."""
    by: dict[tuple[str, str], list[EpisodeRecord]] = defaultdict(list)
    for record in records:
        by[(str(record.config.get("game")), str(record.config.get("view")))].append(record)
    body = []
    for (game, view), games in sorted(by.items()):
        messages = [m for r in games for m in _messages(r)]
        senders: dict[str, int] = defaultdict(int)
        for m in messages:
            senders[str(m.get("sender"))] += 1
        share = ", ".join(f"{s} {n / len(messages):.0%}" for s, n in sorted(senders.items())) if messages else "-"
        body.append([game, view, str(len(games)), f"{len(messages) / len(games):.1f}",
                     f"{mean(len(str(m.get('text', ''))) for m in messages):.0f}" if messages else "-",
                     f"{sum(not _messages(r) for r in games) / len(games):.0%}", share,
                     str(sum(int(r.config.get("refused", 0) or 0) for r in games)),
                     f"{mean(r.n_steps for r in games):.1f}", f"{mean(r.n_moves for r in games):.1f}"])
    return Table(title="Messages", rows=body, header=[
        "game", "view", "games", "messages/game", "chars/message", "silent games", "sent by", "refused",
        "turns/game", "face turns/game"],
        note="Messages delivered (cut to the channel's length, odd bytes as '?'); refused: actions the env "
             "refused (a message past the budget, a turn past the move budget, an action out of phase).")


def seat_table(records: list[EpisodeRecord]) -> Table:
    """Each seat's turns, model calls, malformed replies, failed calls, tokens and messages, per game."""
    stats: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0, 0, 0, 0, 0])
    for record in records:
        turns = record.config.get("turns")
        game = str(record.config.get("game"))
        for step, turn in zip(record.steps, turns if isinstance(turns, list) else []):
            seat = str(turn.get("seat")) if isinstance(turn, dict) else "?"
            row = stats[(game, seat)]
            row[0] += 1
            row[1] += bool(step.reply or step.parse_error or step.model_log)
            row[2] += step.parse_error is not None
            row[3] += step.error is not None
            row[4] += step.input_tokens + step.output_tokens
        for m in _messages(record):
            stats[(game, str(m.get("sender")))][5] += 1
    body = [[game, seat, *map(str, row)] for (game, seat), row in sorted(stats.items())]
    return Table(title="Seats", rows=body, header=["game", "seat", "turns", "model calls", "malformed replies",
                                                   "failed calls", "tokens", "messages sent"],
                 note="A turn a seat had no choice in (the other seat's phase) is played for it: not a model call.")


def scramble_table(records: list[EpisodeRecord]) -> Table:
    """Per seat the agent played and scramble length: the exact distance the scramble reached, and the pass rate."""
    by: dict[tuple[str, int], list[EpisodeRecord]] = defaultdict(list)
    for record in records:
        by[(str(record.config.get("agent_seat")), int(record.config.get("depth", 0)))].append(record)
    body = []
    for (seat, k), games in sorted(by.items()):
        reached = [r.config["scramble_distance"] for r in games if isinstance(r.config.get("scramble_distance"), int)]
        body.append([seat, str(k), str(len(games)), f"{mean(reached):.2f}" if reached else "-",
                     str(max(reached)) if reached else "-", str(len(games) - len(reached)),
                     f"{sum(r.solved for r in games) / len(games):.2f}"])
    return Table(title="Scrambles", rows=body, header=["agent's seat", "k (scramble turns)", "games",
                                                       "mean exact distance reached", "max", "unfinished", "pass rate"],
                 note="Exact optimal distance of the scrambled position (the env's oracle), at most k; the other seat "
                      "is the perfect player (the greedy scrambler, the two-phase solver). Unfinished: the scramble "
                      "never ended.")


def _messages(record: EpisodeRecord) -> list[dict[str, Any]]:
    messages = record.config.get("messages")
    return [m for m in messages if isinstance(m, dict)] if isinstance(messages, list) else []
