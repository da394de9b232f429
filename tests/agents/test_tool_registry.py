"""One registry of tools: the toolbox, the prompts, the CodeAct stubs and the grammar all follow it.

Before the registry, the grammar took ``rotate("y")`` but not ``rotate("x2")`` or
``rotate("x z2")``, which the toolbox runs; the agreement tests below fail on exactly that.
"""

from __future__ import annotations

import inspect
import io
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

import cubebench
from cubebench.agents import codeact
from cubebench.agents.actions import parse_action
from cubebench.agents.base import TOOL_SETTINGS, Task
from cubebench.agents.codeact import CodeActAgent
from cubebench.agents.episode import describe_task
from cubebench.agents.llm import react_grammar, react_pattern
from cubebench.agents.react import ReActAgent
from cubebench.agents.tool_registry import (FACELETS, MAX_TOKENS, MOVES, REGISTRY, ROTATION_TOKENS, TOOL_NAMES,
                                            tool_docs, tools_for)
from cubebench.agents.tools import Toolbox, ToolCallError, ToolError
from cubebench.engine import SOLVED, to_facelets
from cubebench.engine.moves import MOVE_NAMES
from cubebench.engine.notation import format_moves, parse
from cubebench.runner.human_play import HumanAgent

SETTINGS = [(tier, setting) for tier in cubebench.TIERS for setting in TOOL_SETTINGS]


class _NoClient:
    model = "none"

    def close(self) -> None:
        pass


def _task(tier: str, setting: str) -> Task:
    tools = tools_for(tier, setting)
    return Task(tier=tier, tool_setting=setting, tools=tools, action_names=(), obs_format="text",
                reward="none", metric="quarter", max_steps=5, description=describe_task(tier, setting, tools, 5))


def _toolbox(tier: str = "face", setting: str = "basic") -> Toolbox:
    env = gym.make(cubebench.TIERS[tier], max_steps=None, **({"obs_format": "text"} if tier == "symbolic" else {}))
    obs, info = env.reset(options={"scramble": "R U"})
    return Toolbox(env, tier, setting, obs, info)


def _reply(call: str) -> str:
    return f"Thought: act\nAction: {call}"


# --- the registry and the engine ---------------------------------------------------------------------

def test_the_argument_patterns_are_the_engines_canonical_notation() -> None:
    assert set(MOVES.tokens()) == set(MOVE_NAMES)
    assert set(ROTATION_TOKENS.tokens()) == {m for m in MOVE_NAMES if m[0] in "xyz"}
    assert FACELETS.length == len(to_facelets(SOLVED)) and set(to_facelets(SOLVED)) == set(FACELETS.letters)


# --- the toolbox -------------------------------------------------------------------------------------

def test_the_toolbox_implements_exactly_the_registry() -> None:
    methods = {n.removeprefix("_tool_") for n in dir(Toolbox) if n.startswith("_tool_")}
    assert methods == set(REGISTRY)
    for name, spec in REGISTRY.items():
        params = list(inspect.signature(getattr(Toolbox, f"_tool_{name}")).parameters)[2:]  # self, record
        assert params == [p.name for p in spec.params], name


@pytest.mark.parametrize("tier,setting", SETTINGS)
def test_the_toolbox_offers_the_registrys_tools(tier: str, setting: str) -> None:
    names = _toolbox(tier, setting).names
    assert names == tools_for(tier, setting) == tuple(n for n, s in REGISTRY.items() if s.exposed(tier, setting))
    assert set(names) >= {"move", "observe", "done"} and ("rotate" in names) == (tier in ("face", "vertex"))


def test_bad_arity_names_the_registry_signature() -> None:
    tb = _toolbox(setting="standard")
    with pytest.raises(ToolCallError, match=r"bad arguments for solve: solve\(facelets: str\) takes 1 argument, got 0"):
        tb.invoke("solve", [])
    with pytest.raises(ToolCallError, match=r"observe\(\) takes no arguments, got 1"):
        tb.invoke("observe", ["x"])


# --- what models are shown ---------------------------------------------------------------------------

@pytest.mark.parametrize("tier,setting", SETTINGS)
def test_every_prompt_lists_exactly_the_settings_tools(tier: str, setting: str,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    task = _task(tier, setting)
    stubs: dict[str, Any] = {}

    class FakeSandbox:
        def __init__(self, tools: dict[str, Any], *args: Any, **kwargs: Any) -> None:
            stubs.update(tools)

        def close(self) -> None:
            pass

    monkeypatch.setattr(codeact, "Sandbox", FakeSandbox)
    out = io.StringIO()
    HumanAgent(read=lambda _: "quit", out=out, colour=False).reset(task)
    prompts = {"react": ReActAgent(_NoClient()).system_prompt(task),  # type: ignore[arg-type]
               "codeact": CodeActAgent(_NoClient()).system_prompt(task),  # type: ignore[arg-type]
               "play": out.getvalue()}
    for where, text in prompts.items():
        for name, spec in REGISTRY.items():
            assert (f"- {spec.doc}\n" in text + "\n") == (name in task.tools), (where, name)
    assert set(stubs) == set(task.tools)
    for name, fn in stubs.items():  # the CodeAct stubs carry the registry's signature and sentence
        assert f"{name}{inspect.signature(fn)}" == REGISTRY[name].signature
        assert fn.__doc__ == REGISTRY[name].summary


def test_the_codeact_stubs_inside_the_sandbox_show_the_registry() -> None:
    agent = CodeActAgent(_NoClient())  # type: ignore[arg-type]
    try:
        agent.system_prompt(_task("vertex", "standard"))
        assert agent.sandbox is not None
        for name in tools_for("vertex", "standard"):
            doc = agent.sandbox.run(f"{name}.__doc__").value_repr or ""
            assert REGISTRY[name].signature in doc and REGISTRY[name].summary[:30] in doc, (name, doc)
    finally:
        agent.close()


def test_the_grammar_has_a_rule_for_every_tool() -> None:
    grammar = react_grammar(TOOL_NAMES)
    for name in TOOL_NAMES:
        assert f"\n{name.replace('_', '-')}-call ::= \"{name}(" in grammar, name
    for tier, setting in SETTINGS:
        tools = tools_for(tier, setting)
        pattern = react_pattern(tools)
        for name, spec in REGISTRY.items():
            call = f'{name}("{_example(spec.params[0].pattern)}")' if spec.params else f"{name}()"
            assert bool(pattern.fullmatch(_reply(call))) == (name in tools), (tier, setting, call)


def _example(pattern: Any) -> str:
    return pattern.tokens()[0] if hasattr(pattern, "tokens") else to_facelets(SOLVED)


# --- the grammar and the toolbox agree on every argument -----------------------------------------------

def _sequences(tokens: tuple[str, ...], rng: np.random.Generator, n: int) -> list[str]:
    lengths = rng.integers(1, MAX_TOKENS + 1, n)
    return [" ".join(rng.choice(tokens, k)) for k in lengths]


ODD = ["", " ", "R2'", "Rw", "RU", "R  U", " R", "R ", "R3", "w", "x'2", "U’", "x2'", "xy", "R,U", "r2'",
       "x  y", "X", "M2'", "R U\tF", " ".join(["R"] * (MAX_TOKENS + 1)), " ".join(["x"] * (MAX_TOKENS + 1))]
"""Non-canonical spellings, some the toolbox takes (the engine's lenient notation) and some it refuses."""


def _canonical(seq: str) -> bool:
    """The engine's own spelling, within the grammar's bound on tokens."""
    try:
        return seq == format_moves(parse(seq)) and len(seq.split()) <= MAX_TOKENS
    except ValueError:
        return False


def _assert_agree(tool: str, tb: Toolbox, battery: list[str]) -> None:
    """The grammar takes ``tool("<arg>")`` exactly when the toolbox runs it and it is canonical."""
    pattern = react_pattern([tool])
    for arg in battery:
        try:
            tb.invoke(tool, [arg])
            runs = True
        except ToolError:
            runs = False
        reply = _reply(f'{tool}("{arg}")')
        assert bool(pattern.fullmatch(reply)) == (runs and _canonical(arg)), arg
        if pattern.fullmatch(reply):
            assert parse_action(reply) == (tool, [arg])


def test_move_grammar_accepts_exactly_the_canonical_moves_the_toolbox_runs() -> None:
    battery = list(MOVE_NAMES) + _sequences(MOVES.tokens(), np.random.default_rng(0), 300) + ODD
    _assert_agree("move", _toolbox("face"), battery)  # a tier with view rotations: every move is an action


def test_rotate_grammar_accepts_exactly_the_rotations_the_toolbox_runs() -> None:
    battery = list(ROTATION_TOKENS.tokens()) + ["x z2", "y' x2 z"] + \
        _sequences(ROTATION_TOKENS.tokens(), np.random.default_rng(1), 100) + ODD
    _assert_agree("rotate", _toolbox("vertex"), battery)


def test_solver_and_plain_calls_agree() -> None:
    tb = _toolbox("face", "standard")
    pattern = react_pattern(tools_for("face", "standard"))
    cube = to_facelets(SOLVED)
    for call, ok in [(f'solve("{cube}")', True), (f'solve("{"U" * 54}")', True), ('solve("UUU")', False),
                     ("observe()", True), ("done()", True), ('observe("x")', False), ('done("R")', False),
                     ("move()", False), ("solve()", False), ("rotate()", False)]:
        assert bool(pattern.fullmatch(_reply(call))) == ok, call
        name, args = parse_action(_reply(call))
        if ok:  # well-formed: the toolbox runs it (a cube it cannot solve is an ordinary result)
            assert not _malformed(tb, name, args), call
        elif not call.startswith("solve(\"UUU"):
            assert _malformed(tb, name, args), call
    assert tb.call("solve", [cube]) == "The cube is already solved."


def _malformed(tb: Toolbox, name: str, args: list[str]) -> bool:
    try:
        tb.invoke(name, args)
    except ToolCallError:
        return True
    except ToolError:
        pass
    return False


def test_tool_docs_follow_the_registry_order() -> None:
    assert tool_docs(("done", "move")) == f"- {REGISTRY['done'].doc}\n- {REGISTRY['move'].doc}"
    with pytest.raises(ValueError, match="expected basic, standard or ideal"):
        tools_for("face", "oracle")
