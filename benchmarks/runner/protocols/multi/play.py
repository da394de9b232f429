"""Playing one planned multi-agent game (:class:`.plan.GameSpec`) and recording it as an episode record.

The game's env (the AEC form of its PettingZoo env) is built from the spec, every seat gets a fresh
player from the run's agent (:meth:`~.specs.AgentFactory.new_seats`), and the seats take their turns
in the env's order until it ends. Each seat turn is one step of the record: what that seat was shown
(its own observation in words and its image, never more), the model's reply when a model played it,
the action, the reward. The record's config names the seats and holds, beside the steps, which seat
and cycle each step was (``turns``), the messages delivered, each seat's return and how the game ended;
the store, report, viewer and export read it like any record.

A game is ``solved`` when the cube ends solved within the budget (the scrambler-solver game, where the
agent plays one seat against the perfect player: as the solver, when it solves a position at least one
move from solved; as the scrambler, when its scramble reaches the largest exact distance, k), ``error`` when a model seat stopped (its token or cost budget spent, or its model
failing :data:`~cubebench.agents.seats.MAX_CONSECUTIVE_ERRORS` times in a row: the game ends there) or
the game raised (a bug, never a model's reply: those are parse errors), ``failed`` otherwise.
"""

from __future__ import annotations

import time
import traceback
from collections import defaultdict
from typing import Any

import numpy as np
from cubebench.agents.records import EpisodeRecord, StepRecord, observation_digest
from cubebench.agents.seats import ModelSeat, seat_observation
from cubebench.engine.facelets import FACES
from cubebench.engine.state import from_colour_indices, to_facelets
from cubebench.envs.games import GAMES

from ...specs import AgentFactory
from .plan import GameSpec
from .suite import env_kwargs

MAX_TURNS = 100_000
"""A safety net on seat turns per game; every env ends far sooner (``max_cycles``)."""


def make_game_env(spec: GameSpec) -> Any:
    """The AEC env of ``spec``'s game and view, with the suite's budgets."""
    from cubebench.envs.multi import make_multi_env  # the multi extra: imported only by multi-agent runs

    return make_multi_env(GAMES[spec.game].env_id, **env_kwargs(spec.game, spec.view, spec.depth, spec.metric, spec.options))


def play_game(spec: GameSpec, factory: AgentFactory, store_images: bool = True) -> EpisodeRecord:
    """Play ``spec``'s game with fresh seats from ``factory``; an exception (a bug) ends it as ``error``
    with the turns played so far."""
    started = time.perf_counter()
    env = make_game_env(spec)
    game = _Game(spec, env, {}, store_images and factory.spec.send_images)
    failure = None
    try:
        game.seats = factory.new_seats(env, seed=spec.agent_seed, only=spec.seat)
        game.play()
    except Exception as err:  # noqa: BLE001 - a broken game is an error record, not a crashed run
        failure = traceback.format_exception_only(type(err), err)[-1].strip()
    finally:
        for seat in game.seats.values():
            close = getattr(seat, "close", None)
            if callable(close):
                close()
    record = game.record(failure)
    env.close()
    record.wall_s = time.perf_counter() - started
    return record


class _Game:
    """One game in progress: the env, the seats, and what each seat turn showed and did."""

    def __init__(self, spec: GameSpec, env: Any, seats: dict[str, Any], store_images: bool) -> None:
        self.spec, self.env, self.seats, self.store_images = spec, env, seats, store_images
        self.game = env.unwrapped
        self.steps: list[StepRecord] = []
        self.turns: list[dict[str, Any]] = []
        self.returns: dict[str, float] = defaultdict(float)
        self.infos: dict[str, dict[str, Any]] = {}
        self.start = ""
        self.stopped: str | None = None
        self.refused = 0

    def play(self) -> None:
        self.env.reset(seed=self.spec.env_seed, options=self.spec.reset_options or None)
        self.start = _facelets(self.game.state())
        for seat in self.seats.values():
            seat.reset()
        for name in self.env.agent_iter(MAX_TURNS):
            observation, reward, terminated, truncated, info = self.env.last()
            self.returns[name] += float(reward)
            self.infos[name] = dict(info)
            self.refused += bool(info.get("refused"))  # the seat's previous action was refused
            if terminated or truncated:
                self.env.step(None)
                continue
            self._turn(name, observation, info, float(reward))
            out = [s for s, p in self.seats.items() if getattr(p, "out", False)]
            if out:
                self.stopped = f"seat {out[0]} stopped: " + (self.seats[out[0]].last.error or "no reason given")
                self.infos.update({a: dict(i) for a, i in getattr(self.env, "infos", {}).items()})  # after its action
                break

    def _turn(self, name: str, observation: Any, info: dict[str, Any], reward: float) -> None:
        player = self.seats[name]
        action = player.act(observation, info)
        model = isinstance(player, ModelSeat)
        # what the seat was shown: a model seat's own prompt; a scripted seat's observation in the same words
        text, image = player.seen if model else seat_observation(self.game, name, observation, info)
        label = _label(self.game, name, action)
        last = player.last if model else None
        digest, png = observation_digest(text, image, self.store_images)
        self.steps.append(StepRecord(
            index=len(self.steps), observation_text=text, observation_sha256=digest, observation_png_b64=png,
            reply=last.reply if last else "", action=label, tool_calls=[],
            moves=int(label[0] in FACES), reward=reward,
            input_tokens=last.input_tokens if last else 0, output_tokens=last.output_tokens if last else 0,
            cost_usd=last.cost_usd if last else 0.0, latency_s=0.0, error=last.error if last else None,
            model_log=list(last.model_log) if last else [], parse_error=last.parse_error if last else None,
            reply_cut=last.reply_cut if last else None))
        self.turns.append({"seat": name, "cycle": int(info.get("cycle", 0))})
        self.env.step(action)

    def _passed(self, distance: int | None) -> bool:
        """Whether the agent passed: the cube ends solved (the scrambler-solver game: its solver solved a position
        at least one move from solved; as the scrambler, the scramble reached the largest exact distance, k)."""
        scrambler = GAMES[self.spec.game].scrambler
        if scrambler is not None and self.spec.seat == scrambler:
            return distance == self.spec.depth
        solved = any(bool(i.get("is_success")) for i in self.infos.values())
        return solved and (scrambler is None or (distance or 0) > 0)

    def record(self, failure: str | None) -> EpisodeRecord:
        """The game's record (``failure``: the exception that ended it, if any)."""
        infos = self.infos
        distance = next((i["distance"] for i in infos.values() if isinstance(i.get("distance"), int)
                         and i["distance"] >= 0), None)  # the scramble's exact distance (-1: it never ended)
        solved = self._passed(distance) and failure is None and self.stopped is None
        last = next(iter(infos.values()), {})
        channel = getattr(self.game, "channel", None)
        messages = [{"cycle": m.cycle, "sender": m.sender, "text": m.text} for m in (channel.log if channel else [])]
        config: dict[str, Any] = {
            "protocol": GameSpec.protocol, "key": self.spec.key, "game": self.spec.game, "env": GAMES[self.spec.game].env_id,
            "view": self.spec.view, "depth": self.spec.depth, "instance": self.spec.instance,
            "metric": self.spec.metric, "seed": self.spec.seed, "options": self.spec.options,
            "seats": {s: getattr(p, "name", type(p).__name__) for s, p in self.seats.items()},
            "turns": self.turns, "messages": messages, "returns": dict(self.returns),
            "cycles": int(last.get("cycle", 0)), "refused": self.refused,
            "outcome": next((i["outcome"] for i in infos.values() if "outcome" in i), None),
            "scramble_distance": distance, "agent_seat": self.spec.seat,
        }
        if failure or self.stopped:
            config["play_error"] = failure or self.stopped
        errors = sum(s.error is not None for s in self.steps) + (failure is not None)
        end = ""
        try:
            end = _facelets(self.game.state())
        except Exception:  # noqa: BLE001 - a game that broke before its reset has no cube to read
            pass
        return EpisodeRecord(
            agent=" + ".join(sorted(set(config["seats"].values()))), config=config, start_facelets=self.start,
            steps=self.steps, status="solved" if solved else "error" if failure or self.stopped else "failed",
            solved=solved, n_steps=len(self.steps), n_moves=int(last.get("moves", 0)),
            total_reward=sum(self.returns.values()), input_tokens=sum(s.input_tokens for s in self.steps),
            output_tokens=sum(s.output_tokens for s in self.steps), cost_usd=sum(s.cost_usd for s in self.steps),
            end_facelets=end, distance_start=self.spec.certified_distance if distance is None else distance,
            distance_end=0 if solved else None, errors=errors,
            parse_errors=sum(s.parse_error is not None for s in self.steps))


def _label(game: Any, seat: str, action: Any) -> str:
    """The action as the record writes it: ``wait``, ``say <text>``, ``pass`` or the turn's name."""
    names = game.action_names(seat)
    if isinstance(action, dict):
        k, message = int(action.get("action", 0)), str(action.get("message", ""))
    elif isinstance(action, str):
        k, message = 1, action
    else:
        k, message = int(action), ""
    if names[:2] == ("wait", "say") and k == 1:
        return f"say {message}"
    return names[k] if 0 <= k < len(names) else f"invalid {k}"


def _facelets(colours: np.ndarray) -> str:
    return to_facelets(from_colour_indices(np.asarray(colours, dtype=np.uint8)))
