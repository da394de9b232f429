"""Starting and resuming runs: plan the suite, play pending episodes, store each as it finishes.

A question suite (:class:`~.protocols.questions.suite.QuestionSuite`) runs the same way: its items are planned
(and generated) at the start, the run's meta says ``protocol: questions``, and each item is played
and stored as it finishes, like an episode.  A ladder's later rounds are planned as it climbs
(:mod:`.protocols.questions.ladders`), so a run with ladders plays in waves until every ladder has ended.

A run is one SQLite file (:mod:`.store`).  ``start_run`` creates it, atomically, with the
suite, the configuration, the library versions and the plan; ``resume_run``
reopens it (refused while another live driver plays it: :meth:`~.store.RunStore.claim`) and plays
only the planned episodes that have no record yet (damaged
records included: they are moved aside and played again; with ``retry_errors``,
also those that ended in ``error``).  Either way the loop is
:func:`execute`: episodes come back from the backend and each is committed
before the next is counted, so an interruption loses at most the episodes
that were still being played.
"""

from __future__ import annotations

import platform
import sys
import time
from dataclasses import dataclass, field, fields
from importlib import metadata
from pathlib import Path
from typing import Any

from cubebench.agents.episode import DEFAULT_DISTANCE_BUDGET_S  # --distance-budget auto: run_episode's default

from .backends import BACKENDS, WorkersLost, check_backend, run_backend
from .execute import LEGACY_RULES_KEY, PlaySettings, listening_to_steps
from .failures import FailureWatch
from .planning import PlannedSpec, RunnableSuite, check_plan_size
from .progress import Progress
from .protocols import protocol_for, protocol_named
from .specs import AgentFactory, AgentSpec, agent_training
from .store import RunStore, StoreDamaged, StoreError, open_run
from .suite_fields import SuiteError

VERSIONED = ("cubebench", "numpy", "gymnasium", "numba", "pillow", "openai", "anthropic",
             "tqdm", "matplotlib", "ray", "torch")
"""Distributions whose versions every run records (those installed)."""


@dataclass
class RunConfig:
    """How a run plays its episodes (stored in the run; a resume may change concurrency only)."""

    agent: AgentSpec
    play: PlaySettings = field(default_factory=PlaySettings)
    backend: str = "local"
    concurrency: int = 1
    ray_address: str | None = None
    max_cost_usd: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"agent": self.agent.to_dict(), "play": self.play.to_dict(), "backend": self.backend,
                "concurrency": self.concurrency, "ray_address": self.ray_address,
                "max_cost_usd": self.max_cost_usd}

    @classmethod
    def unknown_fields(cls, data: dict[str, Any]) -> list[str]:
        """The fields of a stored configuration this version does not know (a newer cubebench stored them)."""
        parts = {"": (data, ("agent", "play", "backend", "concurrency", "ray_address", "max_cost_usd")),
                 "agent.": (data.get("agent"), tuple(f.name for f in fields(AgentSpec))),
                 "play.": (data.get("play"), (*(f.name for f in fields(PlaySettings)), LEGACY_RULES_KEY))}
        return [f"{where}{name}" for where, (part, known) in parts.items() if isinstance(part, dict)
                for name in part if name not in known]

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "RunConfig":
        return cls(agent=AgentSpec(**data["agent"]), play=PlaySettings.from_dict(data["play"]), backend=data["backend"],
                   concurrency=data["concurrency"], ray_address=data.get("ray_address"),
                   max_cost_usd=data.get("max_cost_usd"))


@dataclass
class RunOutcome:
    """What one invocation did."""

    path: Path
    outcome: str
    played: int
    finished: int
    planned: int
    seconds: float
    unit: str = "episode"
    """What was played: ``episode``, ``item`` or ``game``."""
    planned_before: int | None = None
    """``planned`` when this invocation began (a suite with ladders plans more as they climb)."""
    stopped_by_errors: str | None = None
    """The cause, when the run stopped because its records kept failing for a reason the next call repeats
    (:class:`~.failures.FailureWatch`): they are stored as errors, ``--retry-errors`` plays them again."""


def versions() -> dict[str, str]:
    """Python, platform and the versions of the key libraries installed here."""
    found = {"python": sys.version.split()[0], "platform": platform.platform()}
    for dist in VERSIONED:
        try:
            found[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            continue
    return found


DISTANCE_COST = ("a scripted agent's run gets 5-60x slower (measured: greedy on smoke 131 s instead of 2.2 s); "
                 "a model agent's barely changes")
"""What per-step true distances cost, said on stderr whenever a run turns them on."""


def optimal_tables_ready(metric: str) -> bool:
    """True when the exact solver's tables for ``metric`` are loaded or on disk (no build is triggered)."""
    from cubebench.solver.optimal import tables_ready

    return tables_ready(metric)


def resolve_distance_budget(value: str | float | None, metric: str) -> float | None:
    """Seconds per step for the true distance (``None``: off, the command's default).

    ``auto`` uses 0.1 s when the exact solver's tables are on disk and stays off otherwise; a number
    of seconds needs the tables (it never starts their build: :class:`SuiteError` says how to build
    them).  Either way, a budget that turns the distances on is announced on stderr with its cost.
    """
    if value == "auto":
        budget = DEFAULT_DISTANCE_BUDGET_S if optimal_tables_ready(metric) else None
    else:
        budget = float(value) if value is not None else 0.0
        budget = budget if budget > 0 else None
        if budget is not None and not optimal_tables_ready(metric):
            raise SuiteError(f"--distance-budget {budget:g} needs the exact solver's {metric}-turn tables, which are "
                             f"not built (about 0.9 GB, 2-15 minutes once: python -m cubebench.solver.optimal build "
                             f"--metric {metric}); or leave --distance-budget at 0 (off)")
    if budget is not None:
        print(f"cubebench: per-step true distances on (--distance-budget {value}: up to {budget:g} s of exact "
              f"solver per step): {DISTANCE_COST}; --distance-budget 0 turns them off", file=sys.stderr)
    return budget


def default_run_path(suite: RunnableSuite, agent: str) -> Path:
    """``runs/<suite>-<agent>-<UTC time>.sqlite`` under the working directory, the suite's name and the agent spec
    cleaned (:func:`file_name_part`): whatever a suite file names itself, its run lands in ``runs/``."""
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    return Path("runs") / f"{file_name_part(suite.name, 'suite')}-{file_name_part(agent, 'agent')}-{stamp}.sqlite"


def file_name_part(text: str, fallback: str) -> str:
    """``text`` as one part of a file name: letters, digits, ``-``, ``.`` and ``_`` kept, every other character
    (``/``, ``\\``, NUL, brackets, spaces...) an ``_``, no leading dot (``..`` climbs no folder), at most 60
    characters; ``fallback`` when nothing is left."""
    safe = "".join(c if (c.isalnum() and c.isascii()) or c in "-._" else "_" for c in text).lstrip(".")[:60]
    return safe or fallback


def start_run(suite: RunnableSuite, config: RunConfig, path: Path, *, limit: int | None = None,
              progress: bool | None = None, argv: list[str] | None = None) -> RunOutcome:
    """Create the run database for ``suite`` and play it (or its first ``limit`` episodes or items).

    Every refusal (a backend that cannot run here, an agent that cannot play the suite, a plan that cannot be
    made) comes before the file is created, and the ``cubebench: run PATH`` line only once it is: a refused run
    names no file and leaves none."""
    check_backend(config.backend)  # before the agent's model is loaded and the suite planned
    if path.exists() or path.is_symlink():
        raise StoreError(f"{path} exists: resume it with `cubebench run --resume {path}` or choose another --out")
    protocol = protocol_for(suite)
    config = protocol.configure(suite, config)  # e.g. a question run's answer rules and decoding
    check_plan_size(suite, protocol.unit)
    factory = protocol.factory(config.agent)  # fails early on a bad spec, a missing key or extra
    try:
        plan, meta = protocol.plan(suite, factory)
        path.parent.mkdir(parents=True, exist_ok=True)
        training = agent_training(config.agent.spec)  # the mark a trained agent's results carry (.trained)
        meta = {"suite": suite.to_dict(), "config": config.to_dict(), "versions": versions(), **meta,
                "protocol": protocol.name, "created_at": time.time(),
                "agent_training": training.to_dict() if training is not None else None}
        store = RunStore.create(path, meta, plan)  # atomic: the path names a whole run or nothing
    except BaseException:
        factory.close()
        raise
    print(f"cubebench: run {path} (suite {suite.name}, agent {config.agent.spec})", file=sys.stderr)
    with store:
        try:
            store.claim()  # created a moment ago: a resume started in between would hold it
        except BaseException:
            factory.close()
            raise
        return execute(store, config, factory, limit=limit, progress=progress, argv=argv)


def resume_run(path: Path, *, retry_errors: bool = False, limit: int | None = None,
               concurrency: int | None = None, progress: bool | None = None,
               argv: list[str] | None = None, backend: str | None = None,
               ray_address: str | None = None) -> RunOutcome:
    """Play the unfinished episodes of an existing run (and its ``error`` ones with ``retry_errors``).

    ``concurrency``, ``backend`` and ``ray_address`` replace the stored ones for this session only (a Ray run
    killed with its cluster resumes on another cluster, or locally); where a record is played changes no
    record, and the stored configuration stays as the run was started (each session keeps its command line)."""
    with open_run(path, check_records=False) as store:
        store.claim()  # before anything is retired or played: a driver still playing this run refuses us
        unknown = RunConfig.unknown_fields(store.get_meta("config"))
        if unknown:
            raise store.newer(f"configuration field(s) {', '.join(sorted(unknown))[:200]}")
        try:
            config = RunConfig.from_dict(store.get_meta("config"))
        except (KeyError, TypeError, ValueError) as err:
            raise StoreDamaged(f"{path} is damaged (its configuration does not read back: "
                               f"{type(err).__name__}: {err})") from None
        if concurrency is not None:
            config.concurrency = concurrency
        _override_backend(config, backend, ray_address)
        check_backend(config.backend)  # before a damaged or error record is retired
        damaged = store.retire_damaged()
        if damaged:
            keys = ", ".join(key for key, _ in damaged[:5]) + (", ..." if len(damaged) > 5 else "")
            print(f"cubebench: {len(damaged)} damaged episode record(s) will be played again ({keys}; "
                  f"e.g. {damaged[0][1]}); the damaged rows are kept in the 'retired' table", file=sys.stderr)
        if retry_errors:
            retired = store.retire_errors()
            if retired:
                print(f"cubebench: {retired} error episode(s) will be played again "
                      "(their records are kept in the 'retired' table)", file=sys.stderr)
        factory = protocol_named(store.protocol).factory(config.agent)
        return execute(store, config, factory, limit=limit, progress=progress, argv=argv)


def _override_backend(config: RunConfig, backend: str | None, ray_address: str | None) -> None:
    """A resume's ``--backend`` / ``--ray-address`` in ``config``; an address without the ray backend is refused."""
    if backend is not None:
        if backend not in BACKENDS:
            raise SuiteError(f"unknown backend {backend!r}; expected one of {', '.join(BACKENDS)}")
        if backend != config.backend:
            config.ray_address = None  # the stored address belongs to the stored backend
        config.backend = backend
    if ray_address is not None:
        if config.backend != "ray":
            raise SuiteError(f"--ray-address needs the ray backend, and this run's backend is {config.backend}: "
                             "add --backend ray")
        config.ray_address = ray_address


def execute(store: RunStore, config: RunConfig, factory: AgentFactory, *, limit: int | None,
            progress: bool | None, argv: list[str] | None) -> RunOutcome:
    """Play the store's pending episodes; commit each as it finishes.  A run whose plan grows as it plays (question
    ladders) plays in waves: after each, its protocol plans the next rows (:meth:`~.protocols.RunProtocol.growth`)."""
    protocol = protocol_named(store.protocol)
    grow = protocol.growth(store)
    if grow is not None:
        store.extend_plan(grow())
    planned, pending = len(store.plan()), len(store.pending())
    store.begin_session(list(argv if argv is not None else sys.argv))
    bar = Progress(planned, initial=planned - pending, enabled=progress,
                   unit=protocol.unit,
                   spent=sum(row.cost_usd for row in store.rows()))  # the cap counts earlier sessions too
    started, outcome, played = time.perf_counter(), "complete", 0
    watch = FailureWatch(protocol.unit)
    if config.backend == "local" and config.concurrency > 1:
        _warm_up(store)
    try:
        while True:
            if _capped(config, bar):
                outcome = f"stopped: cost cap ${config.max_cost_usd:g} reached"
                break
            todo = store.pending()
            todo = todo if limit is None else todo[:max(limit - played, 0)]
            if not todo:
                outcome = "complete" if not store.pending() else f"partial: --limit {limit}"
                break
            with listening_to_steps(bar.step):
                played += _play_wave(store, config, factory, todo, bar, watch)
            if watch.stop:
                outcome = watch.outcome()
                break
            if _capped(config, bar):
                outcome = f"stopped: cost cap ${config.max_cost_usd:g} reached"
                break
            if grow is None:
                outcome = "complete" if not store.pending() else f"partial: --limit {limit}"
                break
            new = grow()
            store.extend_plan(new)
            bar.grow(len(new))
    except KeyboardInterrupt:
        outcome = "interrupted"
        raise
    except WorkersLost as err:
        outcome = f"failed: {err}"
        raise WorkersLost(f"{err}; every finished {protocol.unit} is stored: resume with "
                          f"`cubebench run --resume {store.path}`") from None
    except BaseException as err:
        outcome = f"failed: {type(err).__name__}: {err}"
        raise
    finally:
        bar.close()
        try:
            store.end_session(outcome)
        except StoreError:  # a full disk, say: the session stays open in the file, the error that ended it is told
            pass
        factory.close()
    return RunOutcome(store.path, outcome, played, len(store.finished_keys()), len(store.plan()),
                      time.perf_counter() - started, protocol.unit, planned,
                      stopped_by_errors=(watch.cause or "no cause recorded") if watch.stop else None)


def _play_wave(store: RunStore, config: RunConfig, factory: AgentFactory, todo: list[PlannedSpec], bar: Progress,
               watch: FailureWatch) -> int:
    """Play ``todo`` on the run's backend, storing each as it finishes, until the cost cap is reached or the
    records keep failing (``watch``): how many.  The first error's cause is printed as it arrives."""
    results = run_backend(config.backend, todo, factory, config.agent, config.play, config.concurrency,
                          config.ray_address)
    played = 0
    try:
        for spec, record in results:
            store.add_episode(spec, record)
            played += 1
            bar.update(record)
            for note in watch.see(spec.key, record):
                bar.note(note)
            if _capped(config, bar) or watch.stop:
                break
    finally:
        close = getattr(results, "close", None)
        if close is not None:
            close()
    return played


def _capped(config: RunConfig, bar: Progress) -> bool:
    """Whether the run has spent its cost cap (earlier sessions included).  A run that has spent nothing has
    reached no cap: ``--max-cost 0`` stops a paid model after its first paid record, and lets a free agent (a
    local model, a scripted agent) play to the end."""
    return config.max_cost_usd is not None and bar.cost > 0 and bar.cost >= config.max_cost_usd


def _warm_up(store: RunStore) -> None:
    """Build what worker threads share before they may build it concurrently (the protocol says what)."""
    protocol_named(store.protocol).warm_up(store.get_meta("suite")["metric"])
