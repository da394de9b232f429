"""The questions protocol: an answerer answers the items of question tests (Cube Bench, Inf-Bench, STARE)."""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from typing import Any, Callable, cast

from cubebench.solver.oracle import oracle

from ...aggregate import cell_of
from ...answering import decoding_text, rules_text
from ...cli_values import count, csv_values
from ...execute import stored_rules
from ...specs import AgentFactory, AgentSpec, AgentSpecError, is_model_spec
from ...store import RunStore, StoreDamaged
from ...suite_fields import SuiteError
from ...tables import Table
from ..run_protocol import RunProtocol, csv_named
from .ladders import next_rounds
from .plan import ItemRow, ItemSpec, plan_items
from .play import play_item
from .report import question_tables
from .settings import question_settings
from .suite import SCHEMA, QuestionSuite, question_suite_from_dict, restrict_questions

__all__ = ["QuestionsProtocol"]


class QuestionsProtocol(RunProtocol):
    """Question items, asked under answer rules; ladder suites plan their next rounds as they climb."""

    name, unit, plays, selector = QuestionSuite.protocol, "item", "asks question items", "tests"
    schema = SCHEMA
    refused = "answers no questions"
    kind_title, kept_options = "question suites", ("tests", "variants", "reply_max_tokens")
    run_options = frozenset({"obs_format", "variants"})
    comparable = True
    csv_columns = csv_named("key", "test", "depth", "index", "variant", None, "passed", "questions", "moves")
    """A question's ``depth`` is its depth, or the ladder level it was asked at; ``questions`` counts the questions
    asked, ``moves`` the moves a closed-loop or recovery item made."""

    def read_suite(self, data: Any, source: str) -> QuestionSuite:
        return question_suite_from_dict(data, source=source)

    def add_options(self, group: argparse._ArgumentGroup) -> None:
        group.add_argument("--tests", type=csv_values(str), default=None, metavar="T1,T2",
                           help="ask only these tests (e.g. move-choice,closed-loop)")
        group.add_argument("--variants", type=csv_values(str), default=None, metavar="V1,V2",
                           help="ask each test only in these of its variants (e.g. STARE's frames-last,final-form; "
                                "docs/stare.md)")
        # how answers are asked for and decoded (cubebench.runner.answering); --rules is the command's (both read it)
        group.add_argument("--reply-max-tokens", type=count(1), default=None, metavar="N",
                           help="token limit of each model reply (default 4096 where the rules ask for "
                                "reasoning, else 1024); recorded in the run")

    def check_agent(self, spec: AgentSpec) -> None:
        super().check_agent(spec)
        if spec.system_prompt is not None or spec.examples is not None:
            raise AgentSpecError("--system-prompt and --examples shape the episode agents' prompts; "
                                 "each question test writes its own")

    def configure(self, suite: QuestionSuite, config: Any) -> Any:
        agent, play = question_settings(suite, config.agent, config.play)
        agent = replace(agent, send_images=agent.send_images and play.obs_format != "text")  # text only: no image
        return replace(config, agent=agent, play=play)

    def restrict(self, suite: QuestionSuite, chosen: list[str] | None, depths: list[int] | None,
                 variants: list[str] | None = None) -> QuestionSuite:
        return restrict_questions(suite, chosen, depths, variants)

    def plan(self, suite: QuestionSuite, factory: AgentFactory) -> tuple[list[Any], dict[str, Any]]:
        """The plan, its items generated now (a test that cannot build them stops here)."""
        plan = plan_items(suite)
        ladders = sum(grid.runs * len(grid.variants) for grid in suite.ladders.values())
        growing = (f"; the first rounds of {ladders} ladder(s), which plan each next round as they climb, so the "
                   "total grows" if ladders else "")
        print(f"cubebench: {len(plan)} items planned ({len(suite.tests)} question test(s), {suite.metric}-turn"
              f"{growing})", file=sys.stderr)
        return list(plan), {}

    def play(self, spec: Any, factory: AgentFactory, settings: Any) -> Any:
        assert isinstance(spec, ItemSpec)
        return play_item(spec, factory, settings)

    def warm_up(self, metric: str) -> None:
        oracle(metric)

    def growth(self, store: RunStore) -> Callable[[], list[Any]] | None:
        """A ladder suite's next rounds (:func:`.ladders.next_rounds`), planned as the rounds before them end."""
        suite = self._stored_suite(store)
        return (lambda: next_rounds(suite, store.plan(), cast(list[ItemRow], store.rows()))) if suite.ladders else None

    def _stored_suite(self, store: RunStore) -> QuestionSuite:
        try:
            suite = question_suite_from_dict(store.get_meta("suite"), source=str(store.path))
        except SuiteError as err:
            if "unknown" in str(err):  # a test, variant, option or field of a newer cubebench
                raise store.newer(f"a question suite ({str(err)[:200]})") from None
            raise StoreDamaged(f"{store.path} is damaged: its question suite does not read back ({err})") from None
        return suite

    def tables(self, store: RunStore, suite: dict[str, Any], rows: list[Any]) -> list[Table]:
        return question_tables(store, suite)

    def csv_values(self, values: dict[str, Any], uncounted: bool) -> dict[str, Any]:
        """An item's status in the report's words: ``passed``, ``failed``, ``error``, or ``uncounted`` (a recovery
        item whose closed loop never erred: neither passed nor failed, its ``passed`` column empty)."""
        if values["status"] == "error":
            return values
        if uncounted:
            return {**values, "solved": "", "status": "uncounted"}
        return {**values, "status": "passed" if values["status"] == "solved" else values["status"]}

    def uncounted(self, store: RunStore) -> frozenset[str]:
        """Items whose record's ``counted`` is false (records from before it existed count)."""
        return frozenset(key for key, record in store.records() if record.config.get("counted") is False)

    def setup(self, report: Any) -> list[tuple[str, str]]:
        suite, agent = report.suite, report.config["agent"]
        tests = ", ".join(suite["tests"])
        decoding = [("decoding", decoding_text(agent.get("temperature"), agent.get("reply_max_tokens")))] if \
            is_model_spec(agent["spec"]) else []
        return [("suite", f"{suite['name']} ({suite.get('metric', '?')}-turn metric; question tests: {tests})"),
                ("rules", rules_text(stored_rules(report.config))),
                ("agent", self.agent_text(report)), *decoding]

    def agent_text(self, report: Any) -> str:
        agent = report.config["agent"]
        if not is_model_spec(agent["spec"]):
            return str(agent["spec"])
        return agent["spec"] + ("" if agent.get("send_images", True) else " (text only: no images sent)")

    def headline(self, report: Any) -> tuple[str, str]:
        """The share of items passed, over the items that asked something to pass; what it counts, and (where the
        suite has a recovery test) how many recovery items had nothing to recover."""
        rate = cell_of(r for r in report.rows if r.key not in report.uncounted).rate
        tests = report.suite.get("tests", {})
        recovers = "recovery" in tests
        headlines = ["a right answer", *(["a perfect solve"] if "closed-loop" in tests else []),
                     *(["a recovered cube"] if recovers else [])]
        text = rate.format() + f" (each test's headline: {', '.join(headlines)})"
        if recovers:
            apart = sum(r.key in report.uncounted for r in report.rows)
            text += (f"; {apart} recovery item(s) whose closed loop never erred had nothing to recover: "
                     "counted apart, neither passed nor failed")
        return "items passed", text

    def view(self, config: dict[str, Any], view: dict[str, Any]) -> None:
        """An item is passed or failed (or ended in error), never "solved"; one whose recovery had nothing to recover
        is ``uncounted``, as the report counts it: neither passed nor failed."""
        status = view["status"]
        if status != "error":
            status = "uncounted" if config.get("counted") is False else "passed" if status == "solved" else "failed"
        questions = f"{view['n_steps']} question{'s' if view['n_steps'] != 1 else ''}"
        moves = f", {view['n_moves']} move{'s' if view['n_moves'] != 1 else ''}" if view["n_moves"] else ""
        summary = (f"not counted: its closed loop never erred, so there was nothing to recover ({questions})"
                   if status == "uncounted" else f"{status}, {questions}{moves}")
        view["status"] = status
        view["question"] = {"score": config.get("score"), "item": config.get("item"), "error": config.get("play_error"),
                            "summary": summary}
        exchanges = config.get("exchanges")
        for step, judged in zip(view["steps"], exchanges if isinstance(exchanges, list) else []):
            judged = judged if isinstance(judged, dict) else {}  # a damaged record shows its steps without judgement
            step.update(question=judged.get("name"), gold=judged.get("gold"), correct=judged.get("correct"))
