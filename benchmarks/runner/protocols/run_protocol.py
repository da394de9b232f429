"""What every run protocol implements: plan, check the agent, play, and say what its records mean.

A run plays one protocol: episodes (an agent acts on a cube), questions (an answerer answers items) or
games (seats of a multi-agent env).  The store, the backends, the report, the viewer, the exports and the
CLI hold no knowledge of any of them: they ask the run's protocol (:func:`~.protocol_named`).  Adding a
protocol is a folder ``protocols/<name>/`` holding its suite class and schema (read by
:func:`~cubebench.runner.suites.load_suite` through :meth:`RunProtocol.read_suite`), its plan row (a
:class:`~cubebench.runner.planning.PlannedSpec` subclass: defining it registers it with the store), its play, its report
tables and its ``cubebench run`` options (:meth:`RunProtocol.add_options`), and a :class:`RunProtocol` subclass; then
its :func:`~cubebench.runner.protocols.register` line (docs/architecture.md).
"""

from __future__ import annotations

import argparse
from abc import ABC, abstractmethod
from typing import Any, Callable, ClassVar

from cubebench.agents.records import EpisodeRecord

from ..aggregate import cell_of
from ..answering import no_question_settings
from ..execute import PlaySettings
from ..planning import PlannedSpec
from ..rows import StoredRow
from ..specs import AgentFactory, AgentSpec, AgentSpecError, builtins_playing
from ..store import RunStore
from ..tables import Table

__all__ = ["RunProtocol", "csv_named"]

NAMED_COLUMNS = ("key", "part", "depth", "instance", "variant", "setting", "solved", "n_steps", "n_moves")
"""The store's summary columns whose meaning depends on the protocol (the CSV names each for what it holds)."""
SHARED_COLUMNS = ("status", "input_tokens", "output_tokens", "cost_usd", "wall_s", "distance_start", "distance_end")
"""The summary columns every protocol's CSV ends with, under their own names."""


def csv_named(*headers: str | None) -> tuple[tuple[str, str], ...]:
    """``(summary column, CSV header)`` pairs: ``headers`` name :data:`NAMED_COLUMNS` in order (``None`` leaves
    one out), then the shared columns."""
    named = [(column, header) for column, header in zip(NAMED_COLUMNS, headers, strict=True) if header]
    return (*named, *((column, column) for column in SHARED_COLUMNS))


class RunProtocol(ABC):
    """One kind of run (see the module docstring); subclasses are stateless singletons."""

    name: ClassVar[str]
    """Its name in the store (``meta["protocol"]``), the suite class's ``protocol``."""
    unit: ClassVar[str]
    """What it plays, in the singular: ``episode``, ``item``, ``game``."""
    plays: ClassVar[str]
    """What its suites do, for messages ("plays episodes")."""
    schema: ClassVar[str]
    """The ``schema`` of its suite files (``cubebench-suite/1``...)."""
    selector: ClassVar[str]
    """The ``cubebench run`` option that picks a part of its suites beside ``--depths`` (``tiers``...)."""
    refused: ClassVar[str]
    """What an agent that cannot play it does not do, for the refusal (``answers no questions``)."""
    seated: ClassVar[bool] = False
    """Whether its runs have seats that ``--seat`` gives away."""
    kind_title: ClassVar[str]
    """Its suites in the plural, for the command's help and messages (``episode suites``...)."""
    kept_options: ClassVar[tuple[str, ...]] = ()
    """Its ``cubebench run`` options (:meth:`add_options`) that shape the plan or the agent: a run keeps them, and
    ``--resume`` refuses them."""
    run_options: ClassVar[frozenset[str]] = frozenset()
    """The episode-shaping ``cubebench run`` options it reads (``style``, ``distance_budget``, ``obs_format``)."""
    csv_columns: ClassVar[tuple[tuple[str, str], ...]]
    """``(summary column, CSV header)`` in CSV order: each header names what the column holds here (the store
    keeps one set of columns for every protocol)."""
    plots: ClassVar[bool] = False
    """Whether ``cubebench report --plots`` draws its runs."""

    # --- planning and playing -----------------------------------------------------------------------------
    comparable: ClassVar[bool] = False
    """Whether ``cubebench compare`` sets its runs beside a paper's published tables."""

    def factory(self, spec: AgentSpec) -> AgentFactory:
        """The agent factory of a run of this protocol, after refusing an agent that cannot play it."""
        self.check_agent(spec)
        return AgentFactory(spec)

    @abstractmethod
    def add_options(self, group: argparse._ArgumentGroup) -> None:
        """Add its own ``cubebench run`` options (its :attr:`selector` among them) to ``group``."""

    @abstractmethod
    def read_suite(self, data: Any, source: str) -> Any:
        """The suite a suite file's JSON ``data`` describes, validated (``source`` names the file in errors)."""

    def check_agent(self, spec: AgentSpec) -> None:
        """Refuse, before anything is built, an agent whose kinds do not play this protocol (the agent table,
        :data:`~cubebench.runner.specs.AGENT_KINDS`), and seats given away where there are none."""
        if spec.kind_for(self.name) is None:
            takes = ", ".join(builtins_playing(self.name))
            raise AgentSpecError(f"{spec.spec!r} is {spec.described()} and {self.refused}; {self.kind_title} take "
                                 f"{takes + ' or ' if takes else ''}a model spec")
        if spec.seats and not self.seated:
            raise AgentSpecError("--seat gives seats of multi-agent games to a calibration team; this suite has none")

    def configure(self, suite: Any, config: Any) -> Any:
        """The run's configuration with the protocol's open settings filled in (and checked)."""
        no_question_settings(config.agent, config.play, suite.name)
        return config

    @abstractmethod
    def restrict(self, suite: Any, chosen: list[str] | None, depths: list[int] | None,
                 variants: list[str] | None = None) -> Any:
        """The part of ``suite`` on the ``chosen`` parts (its :attr:`selector`'s values), ``depths`` and (where the
        protocol reads them) ``variants``."""

    @abstractmethod
    def plan(self, suite: Any, factory: AgentFactory) -> tuple[list[PlannedSpec], dict[str, Any]]:
        """The suite's plan and the store meta entries that describe it (the suite is checked against the agent)."""

    @abstractmethod
    def play(self, spec: PlannedSpec, factory: AgentFactory, settings: PlaySettings) -> EpisodeRecord:
        """Play (or ask) one planned spec: what a backend's worker does with it."""

    def warm_up(self, metric: str) -> None:
        """Build what worker threads share before they may build it at once."""

    def growth(self, store: RunStore) -> Callable[[], list[PlannedSpec]] | None:
        """When the run's plan grows as it plays (question ladders), what plans its next rows from the store's plan
        and rows so far (empty: nothing more to play); ``None`` when the plan is whole from the start."""
        return None

    # --- reporting ----------------------------------------------------------------------------------------
    @abstractmethod
    def tables(self, store: RunStore, suite: dict[str, Any], rows: list[StoredRow]) -> list[Table]:
        """The report's tables of a run."""

    def uncounted(self, store: RunStore) -> frozenset[str]:
        """Keys of records that asked nothing their headline can score (counted apart)."""
        return frozenset()

    @abstractmethod
    def setup(self, report: Any) -> list[tuple[str, str]]:
        """What ran: the report's first facts (suite, agent, and what this protocol adds)."""

    def agent_text(self, report: Any) -> str:
        """The agent as the report names it."""
        return str(report.config["agent"]["spec"])

    def headline(self, report: Any) -> tuple[str, str]:
        """The report's headline fact: its name and value."""
        return "pass rate", cell_of(report.rows).rate.format()

    def view(self, config: dict[str, Any], view: dict[str, Any]) -> None:
        """Add what the viewer shows of this protocol's record (``config``) to its ``view`` entry."""

    def csv_values(self, values: dict[str, Any], uncounted: bool) -> dict[str, Any]:
        """A stored row's values as the CSV shows them (``uncounted``: the row is one of :meth:`uncounted`)."""
        return values
