"""``cubebench play``: a person plays any tier in the terminal, as an agent would.

The person is an :class:`~cubebench.agents.base.Agent` run by :func:`cubebench.agents.episode.run_episode`:
same task text, same observations (the tier's text form, coloured with ANSI
escapes when the terminal allows), same tools of the chosen setting, same
20-step budget, and the same episode record.  Where a display exists, the image
tiers (visual, face, vertex) show their image observation in a window instead,
the very pixels an image-capable agent gets, while the terminal takes the typed
calls and prints the feedback.  Type a tool call such as
``move("R U R' U'")``, ``rotate("y")``, ``observe()``, ``solve_current()`` or
``done()``; ``help`` lists the tools, ``quit`` ends the episode.  A line that is
not a tool call costs no step.
"""

from __future__ import annotations

import contextlib
import re
import sys
from typing import Any, Callable, TextIO

import cubebench
import gymnasium as gym
import numpy as np
from cubebench.agents.actions import ActionParseError, parse_action
from cubebench.agents.base import Observation, Task, Turn
from cubebench.agents.episode import run_episode
from cubebench.agents.records import EpisodeRecord
from cubebench.agents.tools import Toolbox, tool_docs
from cubebench.budgets import episode_budget, move_budget
from cubebench.engine.facelets import COLOUR_LETTERS, COLOUR_RGB, FACES
from cubebench.engine.metric import Metric, parse_metric
from cubebench.engine.rewards import parse_reward
from cubebench.envs.cube_env import INTERACTION_STEPS
from cubebench.render.window import Window, display_available
from cubebench.tasks.items import EXACT_RANGE
from cubebench.tiers import DEFAULT_TIER, tier_names, tier_spec

from .protocols.episodes.instances import shipped_starts
from .run import optimal_tables_ready
from .suite_fields import SuiteError

_GRID_ROW = re.compile(r"^\s*[WRGYOB](?: +[WRGYOB])*\s*$")
_FACELETS = re.compile(rf"^\s*[{FACES}]{{54}}\s*$")


def _paint(ch: str, index: int) -> str:
    r, g, b = (int(v) for v in COLOUR_RGB[index])
    fg = "30" if r + g + b > 400 else "97"
    return f"\x1b[{fg};48;2;{r};{g};{b}m{ch}\x1b[0m"


def colourise(text: str) -> str:
    """ANSI background colours on sticker letters (colour grids and the 54-letter facelet string)."""
    out = []
    for line in text.splitlines():
        if _FACELETS.match(line):
            out.append(re.sub(f"[{FACES}]", lambda m: _paint(m.group(0), FACES.index(m.group(0))), line))
        elif _GRID_ROW.match(line):
            out.append(re.sub(r"[WRGYOB]", lambda m: _paint(m.group(0), COLOUR_LETTERS.index(m.group(0))), line))
        else:
            out.append(line)
    return "\n".join(out)


class HumanAgent:
    """Reads tool calls typed by a person; prints observations (optionally coloured)."""

    name = "human"

    def __init__(self, read: Callable[[str], str] = input, out: TextIO | None = None, colour: bool = True,
                 show: Callable[[np.ndarray], None] | None = None) -> None:
        self.read, self.out, self.colour, self.show = read, out or sys.stdout, colour, show
        self.tools_text = ""

    def reset(self, task: Task) -> None:
        self.tools_text = tool_docs(task.tools)
        self._say(task.description + "\n\nTools:\n" + self.tools_text + "\nType a tool call, 'help' or 'quit'.")

    def act(self, observation: Observation, tools: Toolbox) -> Turn:
        text = colourise(observation.text) if self.colour else observation.text
        self._say(f"\n--- step {observation.step + 1} ({observation.steps_left} left) ---\n{text}")
        if observation.image is not None and self.show is not None:
            self.show(observation.image)
            self._say("(the observation is in the window)")
        if observation.reward is not None:
            self._say(f"(reward of the last step: {observation.reward:+g})")
        while True:
            try:
                line = self.read("> ").strip()
            except EOFError:
                line = "quit"
            if line in ("help", "?"):
                self._say(self.tools_text)
                continue
            if line in ("quit", "exit"):
                tools.call("done")
                return Turn(action="done()", reply=line)
            try:
                name, args = parse_action("Action: " + line)
            except ActionParseError as err:
                self._say(str(err).replace("Reply with a line \"Thought: ...\" and then a line \"Action: "
                                           "<tool>(<argument>)\", e.g. Action: ", "Type e.g. "))
                continue
            if name not in tools.names:
                self._say(f"unknown tool {name!r}; available: {', '.join(tools.names)}")
                continue
            tools.call(name, args)
            return Turn(action=f"{name}({', '.join(repr(a) for a in args)})", reply=line)

    def _say(self, text: str) -> None:
        print(text, file=self.out, flush=True)


def start_options(depth: int, metric: str, scramble: str | None, instance: int | None,
                  seed: int | None = None) -> tuple[dict[str, Any], str]:
    """Reset options and what they start from, in words: a given scramble, the k-th shipped certified
    instance, or (by default) a seeded draw among the shipped certified instances of ``depth``.  A certified
    start plays under the benchmark's move budget of its depth (:func:`~cubebench.budgets.move_budget`, as the
    suites do); a scramble's depth is not certified, so it gets the budget of an uncertified start.

    A depth with no shipped set falls back to a seeded scramble certified exactly: by the table-free
    distance oracle within its range, else by the exact solver, which needs its tables: where they
    are not built this stops with one line (size, time, the build command) instead of starting a
    build of about 1 GB.
    """
    if scramble:
        return {"scramble": scramble}, f"the scramble {scramble}"
    starts = shipped_starts(depth, metric)
    if instance is not None:
        if not 0 <= instance < len(starts):
            raise SuiteError(f"no certified instance {instance} of depth {depth} ({metric}-turn): "
                             f"{len(starts)} ship")
        return ({"state": starts[instance].state, "max_moves": move_budget(depth, metric)},
                f"certified instance {instance} of depth {depth}")
    if starts:
        k = int(np.random.default_rng(seed).integers(len(starts)))
        return ({"state": starts[k].state, "max_moves": move_budget(depth, metric)},
                f"certified instance {k} of depth {depth} (--instance {k} replays it)")
    if depth > EXACT_RANGE[metric] and not optimal_tables_ready(metric):
        raise SuiteError(f"depth {depth} has no shipped certified instances ({metric}-turn), and certifying a "
                         f"scramble needs the exact solver's tables, which are not built (about 0.9 GB, 2-15 minutes "
                         f"once: python -m cubebench.solver.optimal build --metric {metric}); or play a shipped "
                         f"depth (1-4, 8, 12, 16, 20) or --scramble \"R U F ...\"")
    return {"depth": depth}, f"a seeded scramble certified at depth {depth}"


def open_window(tier: str, window: bool | None, out: TextIO) -> Window | None:
    """The window for the observations: asked for (``True``), or (``None``) wherever one can open.

    Only the image tiers have an image observation.  Asking for a window for the
    symbolic tier, without a display or without matplotlib raises
    :class:`SuiteError` with the reason; ``None`` falls back to the terminal.
    """
    pictured = tier_spec(tier).pictured
    if window is False or (window is None and (not pictured or not display_available())):
        return None
    if not pictured:
        raise SuiteError(f"the {tier} tier's observation is text; --window shows the image tiers "
                         f"({tier_names('pictured')})")
    try:
        return Window(f"CubeBench {tier}")
    except RuntimeError as err:
        if window:
            raise SuiteError(f"{err}; or play in the terminal with --no-window") from None
        print(f"(no window: {err})", file=out)
        return None


def play(tier: str = DEFAULT_TIER, *, depth: int = 3, scramble: str | None = None, instance: int | None = None,
         reward: str = "none", setting: str = "basic", metric: Metric = "quarter", seed: int | None = None,
         max_steps: int = INTERACTION_STEPS, read: Callable[[str], str] = input, out: TextIO | None = None,
         colour: bool | None = None, window: bool | None = False) -> EpisodeRecord:
    """Play one episode in the terminal (image tiers in a window, see :func:`open_window`); return its record."""
    out = out or sys.stdout
    colour = out.isatty() if colour is None else colour
    metric, reward = parse_metric(metric), parse_reward(reward)
    options, start = start_options(depth, metric, scramble, instance, seed)
    print(f"Playing {tier} from {start}.", file=out)
    budget = episode_budget(depth=depth, metric=metric, view_actions=False, max_moves=None, max_rotations=None,
                            reset_options=options)["max_moves"]
    unit = "quarter turns" if metric == "quarter" else "face turns"
    why = f"the benchmark's budget at depth {depth}" if "scramble" not in options else \
        "the benchmark's budget for a start of no certified depth"
    print(f"Move budget: at most {budget} {unit} ({why}).", file=out)
    with contextlib.ExitStack() as cleanup:
        shown = open_window(tier, window, out)
        if shown:
            cleanup.callback(shown.close)
        env = gym.make(cubebench.TIERS[tier], depth=depth, reward=reward, metric=metric, max_steps=None,
                       obs_format="image" if shown else "text")
        cleanup.callback(env.close)
        agent = HumanAgent(read, out, colour, show=shown.show if shown else None)
        record = run_episode(agent, env, tool_setting=setting, seed=seed, reset_options=options,
                             max_steps=max_steps, distances="none")
    verdict = "Solved!" if record.solved else "Not solved."
    print(f"\n{verdict} {record.n_steps} steps, {record.n_moves} moves, {record.n_rotations} rotations.",
          file=out)
    return record
