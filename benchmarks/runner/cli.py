"""The ``cubebench`` command: the engine's subcommands (:mod:`cubebench.engine_cli`) and the runner's own.

The runner adds ``run``, ``report``, ``view``, ``play`` and ``export``; it is the
top layer, so it is the one place where the whole command line is assembled.
"""

from __future__ import annotations

import argparse
import difflib
import os
import signal
import sqlite3
import sys
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable, Iterator, NoReturn, Sequence, cast

from cubebench import __version__, engine_cli
from cubebench.agents.base import TOOL_SETTINGS
from cubebench.engine import CubeInputError
from cubebench.engine.metric import METRICS
from cubebench.engine.rewards import REWARDS, unalias_reward
from cubebench.envs.cube_env import INTERACTION_STEPS
from cubebench.tiers import DEFAULT_TIER, TIER_SPECS, tier_names

from .answering import rules_text
from .backends import BackendUnavailable, WorkersLost
from .cli_values import amount, count, csv_values
from .compare import add_compare
from .execute import PlaySettings
from .export import export_csv, export_jsonl
from .export_tasks import (
    EXPORT_FORMATS,
    EXPORT_OBS_FORMATS,
    IMAGE_MODES,
    KINDS,
    OLD_STARTS,
    STARTS,
    ExportError,
    ExportRequest,
    export_tasks,
)
from .failures import short_cause
from .html_report import report_html
from .human_play import play
from .planning import RunnableSuite
from .plots import PlotsUnavailable, require_matplotlib, write_plots
from .protocols import PROTOCOLS, protocol_for, selectors
from .report import build_report, text_report
from .run import RunConfig, default_run_path, resolve_distance_budget, resume_run, start_run
from .specs import AGENT_KINDS, AgentSpec, AgentSpecError, default_style
from .splits import SplitError
from .store import StoreDamaged, StoreError, StoreFull, open_run
from .store_errors import sqlite_failure
from .suites import SuiteError, available_suites, load_suite, named_suite_protocol
from .viewer import viewer_html

EXIT_USAGE = 2


class _UserError(Exception):
    """An error to print as one line and exit with status 2."""


def _guard(fn: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    """Turn the runner's expected errors into one clear line and exit status 2."""

    def run(args: argparse.Namespace) -> int:
        try:
            return fn(args)
        except StoreError as err:  # a full disk is no usage error: exit 1
            print(f"cubebench: error: {err}", file=sys.stderr)
            return 1 if isinstance(err, StoreFull) else EXIT_USAGE
        except (_UserError, SuiteError, AgentSpecError, PlotsUnavailable, BackendUnavailable) as err:
            print(f"cubebench: error: {err}", file=sys.stderr)
            return EXIT_USAGE
        except WorkersLost as err:  # a cluster failure, not a usage error: one line, exit 1
            print(f"cubebench: error: {err}", file=sys.stderr)
            return 1
        except sqlite3.DatabaseError as err:  # what the checks at opening could not see (damage, a full disk)
            run = getattr(args, "resume", None) or getattr(args, "run", None) or getattr(args, "out", None)
            failure = sqlite_failure(err, Path(run)) if run else StoreDamaged(str(err))
            if isinstance(failure, StoreDamaged):
                failure = StoreDamaged(f"the run database{f' {run}' if run else ''} is damaged or unreadable: {err}")
            print(f"cubebench: error: {failure}", file=sys.stderr)
            return 1 if isinstance(failure, StoreFull) else EXIT_USAGE
        except BrokenPipeError:  # output piped into `head` and closed early: not an error
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            return 0
        except OSError as err:  # a file-system problem the output checks could not foresee (disk full, ...)
            print(f"cubebench: error: {_os_reason(err)}", file=sys.stderr)
            return EXIT_USAGE

    return run


def _os_reason(err: OSError) -> str:
    """An OSError as one line: what went wrong, and where."""
    where = f": {err.filename}" if err.filename else ""
    return f"{err.strerror or err}{where}"


def _output_file(value: str, flag: str) -> Path:
    """An output file named by ``flag``, its missing parent folders created.

    The one policy of every output path (``run --out``, ``report --html``, ``report --plots``,
    ``view --out``, ``export --out``): missing parent folders are created; a parent that is a file, a
    folder that cannot be created, or an output that is a folder is one line (exit 2), before any work.
    """
    path = Path(value)
    _make_folder(path.parent, flag, value)
    if path.is_dir():
        raise _UserError(f"{flag} {value} is a folder; give a file name")
    if not os.access(path.parent if str(path.parent) else ".", os.W_OK):  # a read-only mount, say
        raise _UserError(f"{flag} {value}: cannot write in {path.parent}: it is read-only here")
    return path


def _output_folder(value: str, flag: str) -> Path:
    """An output folder named by ``flag``, created with its missing parents (see :func:`_output_file`)."""
    path = Path(value)
    _make_folder(path, flag, value)
    return path


def _make_folder(folder: Path, flag: str, value: str) -> None:
    blocker = next((p for p in (folder, *folder.parents) if p.exists() or p.is_symlink()), None)
    if blocker is not None and not blocker.is_dir():
        raise _UserError(f"{flag} {value}: {blocker} is a file, not a folder")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise _UserError(f"{flag} {value}: cannot create the folder {folder}: {_os_reason(err)}") from None


def _write_text(path: Path, text: str, flag: str) -> None:
    """Write an output file; a failure is one line naming the flag."""
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as err:
        raise _UserError(f"{flag} {path}: cannot write: {_os_reason(err)}") from None


@contextmanager
def _sigterm_as_interrupt() -> Iterator[None]:
    """``kill PID`` ends a run like Ctrl-C: the session is closed and child servers are stopped."""
    def handler(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    try:
        previous = signal.signal(signal.SIGTERM, handler)
    except ValueError:  # not the main thread (e.g. called from a worker): leave signals alone
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


# --- run ---------------------------------------------------------------------------------------
def _cmd_run(args: argparse.Namespace) -> int:
    with _sigterm_as_interrupt():
        try:
            return _run(args)
        except KeyboardInterrupt:
            run = args.resume or getattr(args, "run_path", None)
            if run is None or not Path(run).is_file():  # stopped before the run was created: nothing to resume
                raise
            print(f"cubebench: interrupted; every finished record is stored: resume with: cubebench run --resume {run}",
                  file=sys.stderr)
            return 130


def _run(args: argparse.Namespace) -> int:
    outcome = _resume(args) if args.resume else _start(args)
    grown = outcome.planned - (outcome.planned_before or outcome.planned)
    more = f" ({grown} of them planned as the ladders climbed)" if grown > 0 else ""
    print(f"cubebench: {outcome.outcome}: {outcome.played} {outcome.unit}(s) played in {outcome.seconds:.1f} s; "
          f"{outcome.finished} of {outcome.planned} planned {outcome.unit}s finished{more}", file=sys.stderr)
    with open_run(outcome.path, readonly=True) as store:
        report = build_report(store)
    if not args.quiet:
        print(text_report(report))
    if report.evaluated_nothing or outcome.stopped_by_errors:
        what, cause = ((f"nothing was evaluated: every {report.unit} ended in error", report.first_error)
                       if report.evaluated_nothing else (outcome.outcome, outcome.stopped_by_errors))
        print(f"cubebench: {what} ({short_cause(cause)}); once the cause is fixed, play them again: "
              f"cubebench run --resume {outcome.path} --retry-errors", file=sys.stderr)
        return 1
    if outcome.finished < outcome.planned:
        print(f"cubebench: resume with: cubebench run --resume {outcome.path}", file=sys.stderr)
    return 0


def _resume(args: argparse.Namespace) -> Any:
    kept = [flag for protocol in PROTOCOLS.values() for flag in protocol.kept_options]
    for flag in ("suite", "agent", "out", *kept, "depths", "system_prompt", "examples", "rules", "seed"):
        if getattr(args, flag):
            raise _UserError(f"--resume continues a run as it was configured; drop --{flag.replace('_', '-')}")
    return resume_run(Path(args.resume), retry_errors=args.retry_errors, limit=args.limit,
                      concurrency=args.concurrency, progress=args.progress, argv=sys.argv[:],
                      backend=args.backend, ray_address=args.ray_address)


def _start(args: argparse.Namespace) -> Any:
    if not args.suite or not args.agent:
        raise _UserError("run needs --suite and --agent (or --resume RUN)")
    if args.ray_address and args.backend != "ray":
        raise _UserError("--ray-address needs --backend ray")
    suite = _restricted(load_suite(args.suite), args)
    if args.seed is not None:
        suite = replace(cast(Any, suite), seed=args.seed)  # every suite class is a dataclass with a seed
    if getattr(args, "private_classes", False):
        suite = replace(cast(Any, suite), instance_classes="private")  # an episode suite's field (.private_classes)
    style = args.style or default_style(args.agent)
    obs_format = args.obs_format or AgentSpec(args.agent, style=style).default_obs_format
    protocol = protocol_for(suite)
    agent = AgentSpec(spec=args.agent, style=style, temperature=args.temperature,
                      episode_max_tokens=args.episode_max_tokens, episode_max_cost_usd=args.episode_max_cost,
                      max_attempts=args.model_attempts, system_prompt=_read_text(args.system_prompt, "--system-prompt"),
                      examples=_read_text(args.examples, "--examples"),
                      seats=_seats(args.seat), reply_max_tokens=args.reply_max_tokens)
    path = args.run_path = _output_file(args.out or str(default_run_path(suite, args.agent)), "--out")
    budget = (resolve_distance_budget(args.distance_budget, suite.metric)
              if "distance_budget" in protocol.run_options else None)
    config = RunConfig(
        agent=agent,
        play=PlaySettings(obs_format=obs_format, store_images=not args.no_images, distance_budget_s=budget,
                          rules=args.rules),
        backend=args.backend or "local", concurrency=args.concurrency or _default_concurrency(agent, args.backend),
        ray_address=args.ray_address,
        max_cost_usd=args.max_cost,
    )
    return start_run(suite, config, path, limit=args.limit, progress=args.progress, argv=sys.argv[:])


def _default_concurrency(agent: AgentSpec, backend: str | None) -> int:
    """Episodes at once when ``--concurrency`` is not given: a batched in-process model's on the local backend
    (its calls share forward passes), one elsewhere (each process or Ray worker would load its own model)."""
    return agent.default_concurrency if (backend or "local") == "local" else 1


def _restricted(suite: RunnableSuite, args: argparse.Namespace) -> RunnableSuite:
    """``suite`` restricted by its protocol's selector (``--tiers``, ``--tests`` or ``--games``), ``--depths`` and
    (question suites) ``--variants``; the options its protocol does not read are refused."""
    protocol = protocol_for(suite)
    stray = [f"--{s}" for s in selectors() if getattr(args, s) and s != protocol.selector]
    if stray:
        raise _UserError(f"suite {suite.name!r} {protocol.plays}: {', '.join(stray)} "
                         f"{'is' if len(stray) == 1 else 'are'} not for it; use --{protocol.selector} (and --depths)")
    users = _run_option_users()
    unread = [name for name in users if getattr(args, name) not in (None, False, []) and name not in protocol.run_options]
    if unread:  # (a default is None, False or 0: no option given)
        raise _UserError(f"suite {suite.name!r} {protocol.plays}: " + "; ".join(
            f"--{name.replace('_', '-')} is for {users[name]}" for name in unread))
    return protocol.restrict(suite, getattr(args, protocol.selector), args.depths, args.variants)


def _run_option_users() -> dict[str, str]:
    """Who reads each option a protocol may not (:attr:`~.protocols.RunProtocol.run_options`): ``{"variants":
    "question suites", ...}``."""
    names = sorted({name for protocol in PROTOCOLS.values() for name in protocol.run_options})
    return {name: " and ".join(p.kind_title for p in PROTOCOLS.values() if name in p.run_options) for name in names}


def _seats(values: list[str] | None) -> dict[str, str]:
    """``--seat SEAT=TEAM`` values as a mapping (each seat once)."""
    seats: dict[str, str] = {}
    for value in values or ():
        seat, sep, team = value.partition("=")
        if not sep or not seat or not team or seat in seats:
            raise _UserError(f"--seat takes SEAT=TEAM once per seat (e.g. --seat observer_0=perfect), got {value!r}")
        seats[seat] = team
    return seats


def _read_text(path: str | None, flag: str) -> str | None:
    """The text of a file named on the command line (stored in the run, so a resume needs no file)."""
    if path is None:
        return None
    try:
        return Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise _UserError(f"{flag}: cannot read {path}: {err}") from None


RUN_USAGE = """cubebench run --suite NAME|FILE --agent SPEC [options]
       cubebench run --resume RUN [--retry-errors] [--limit N] [--concurrency N] [--backend B] [--ray-address A]"""

RUN_EXAMPLES = """examples:
  cubebench run --suite smoke --agent solver --out runs/smoke.sqlite       72 episodes in seconds, no API key
  cubebench run --suite exp1 --agent openai:gpt-4o --max-cost 5            a model (OPENAI_API_KEY), capped at $5
  cubebench run --suite smoke --agent local --out runs/smoke-local.sqlite --limit 6   the local model: 6 now
  cubebench run --resume runs/smoke-local.sqlite                           ... and the rest later
  cubebench run --suite cube-bench-smoke --agent oracle                    Cube Bench's question tests (also: random)
  cubebench run --suite multi-smoke --agent perfect                        multi-agent games (also: random)
  cubebench run --suite multi-smoke --agent silent --games observer-actor,two-cameras
  cubebench run --suite multi-smoke --agent openai:gpt-4o --seat observer_0=perfect

Every finished episode, item or game is stored at once in the run's SQLite file; Ctrl-C stops a run
and --resume continues it. The summary tables are printed at the end (cubebench report RUN prints
them again; --quiet skips them). docs/runner.md has the details."""

def _agent_help() -> str:
    """``--agent``'s help, written from the agent table: each protocol's built-in agents, then the kinds that play
    every protocol."""
    parts = [f"{p.kind_title}: " + ", ".join(k.help for k in AGENT_KINDS if k.plays is not None and p.name in k.plays)
             for p in PROTOCOLS.values()]
    return "; ".join(parts) + "; and on every protocol " + " or ".join(k.help for k in AGENT_KINDS if k.plays is None)


class _Parser(argparse.ArgumentParser):
    """An argument parser whose usage errors are one line (``cubebench run: error: ...; see --help``), exit 2.

    An option no subcommand knows (``cubebench run ... --teirs``) is refused by the subcommand it was given to,
    with the option it most likely meant (``did you mean --tiers?``), not by the top-level parser."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see {self.prog} --help)\n")

    def parse_args(self, args: Sequence[str] | None = None, namespace: Any = None) -> Any:  # type: ignore[override]
        parsed, extras = self.parse_known_args(args, namespace)
        if extras:
            self._unknown(parsed, extras)
        return parsed

    def _unknown(self, parsed: argparse.Namespace, extras: list[str]) -> NoReturn:
        parser: argparse.ArgumentParser = self
        for action in self._actions:  # the subcommand's parser (and a sub-subcommand's, e.g. instances verify)
            if isinstance(action, argparse._SubParsersAction):
                parser = action.choices.get(getattr(parsed, action.dest or "", None) or "", parser)
        options = [o for action in parser._actions for o in action.option_strings if o.startswith("--")]
        guesses = [difflib.get_close_matches(word.partition("=")[0], options, n=1, cutoff=0.6) for word in extras
                   if word.startswith("-")]
        meant = next((g[0] for g in guesses if g), None)
        parser.error(f"unrecognized arguments: {' '.join(extras)}" + (f"; did you mean {meant}?" if meant else ""))


def _add_run(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("run", help="evaluate an agent on a benchmark suite (resumable)", usage=RUN_USAGE,
                       formatter_class=argparse.RawDescriptionHelpFormatter, epilog=RUN_EXAMPLES,
                       description="Evaluate an agent on a suite: episodes (CubeBench), question items (Cube Bench, "
                                   "Inf-Bench, STARE) or multi-agent games.")
    what = p.add_argument_group("what to run (--suite and --agent are required, unless --resume)")
    what.add_argument("--suite", help=f"a named suite ({', '.join(available_suites())}) or a suite JSON file")
    what.add_argument("--agent", metavar="SPEC", help=_agent_help())
    what.add_argument("--out", metavar="RUN.sqlite",
                      help="the run database to create, its missing folders too (default "
                           "runs/<suite>-<agent>-<time>.sqlite); an existing file is never overwritten")
    what.add_argument("--resume", metavar="RUN", help="continue an interrupted run: play its unfinished episodes")
    what.add_argument("--retry-errors", action="store_true",
                      help="with --resume: also replay episodes that ended in error (old records are kept)")
    what.add_argument("--depths", type=csv_values(int), default=None, metavar="D1,D2",
                      help="play only these depths of the suite (episodes, question tests and games alike)")
    what.add_argument("--limit", type=count(0), default=None, metavar="N",
                      help="play at most N unfinished episodes, items or games now (the run stays resumable)")
    what.add_argument("--seed", type=count(0), default=None, metavar="N",
                      help="the run's seed in place of the suite's (0): what every item, instance and agent draws "
                           "from. An episode suite's certified instances are the public shipped sets under seed 0 and "
                           "a private draw of fresh certified instances under any other: choose a secret seed for a "
                           "score you publish (docs/runner.md, \"Instances\"). A draw is private as positions, not up "
                           "to symmetry: every quarter-turn class of depths 1-3 is a public one and more than half of a "
                           "depth-4 draw lies in one (the report's instance line counts them); --private-classes keeps "
                           "them out from depth 4")
    what.add_argument("--rules", "--protocol", dest="rules", default=None, metavar="NAME",
                      help="the rules the run plays by (--protocol is their old name, still read). Question suites: "
                           "how answers are asked for, paper (default: each paper's own prompt and answer form), "
                           "strict (one-line answers only) or release (Cube Bench's code release: closed-loop steps "
                           f"reason, then tag); episode suites: the budget, paper (default: the CubeBench paper's "
                           f"{INTERACTION_STEPS} interaction steps, no move cap) or strict (our move budget per depth); "
                           "recorded in the run")

    for protocol in PROTOCOLS.values():  # each protocol's own options, under the names of its shipped suites
        named = ", ".join(name for name in available_suites() if named_suite_protocol(name) == protocol.name)
        protocol.add_options(p.add_argument_group(f"{protocol.kind_title} ({named})"))

    model = p.add_argument_group("model agents")
    model.add_argument("--system-prompt", metavar="FILE", default=None,
                       help="the system prompt template ({task} and {tool_docs} are filled in; "
                            "default: agents/prompts/<style>_system.txt)")
    model.add_argument("--examples", metavar="FILE", default=None,
                       help="few-shot examples appended to the system prompt (an empty file: none; "
                            "default: agents/prompts/<style>_examples.txt)")
    model.add_argument("--temperature", type=amount, default=None,
                       help="model sampling temperature (question suites: 0 unless given, as the papers decode)")
    model.add_argument("--episode-max-tokens", type=count(1), default=None, metavar="N",
                       help="token budget per episode")
    model.add_argument("--episode-max-cost", type=amount, default=None, metavar="USD", help="USD budget per episode")
    model.add_argument("--model-attempts", type=count(1), default=None, metavar="N",
                       help="attempts per model call before a step counts as a model error (default 5)")
    model.add_argument("--max-cost", type=amount, default=None, metavar="USD",
                       help="stop the run once it has cost this many USD (earlier sessions included; a run that "
                            "has spent nothing is never stopped: --max-cost 0 lets a free agent play to the end)")

    running = p.add_argument_group("execution and output")
    running.add_argument("--concurrency", type=count(1), default=None, metavar="N",
                         help="episodes played at once (threads for API agents; default 1)")
    running.add_argument("--backend", choices=("local", "process", "ray"), default=None,
                         help="local: in-process threads (default); process: a process pool; ray: a Ray cluster "
                              "(with --resume: play the rest there instead of the run's own backend)")
    running.add_argument("--ray-address", default=None,
                         help="Ray cluster address (default: start a local one; with --resume: the run's own)")
    running.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                         help="show the progress bar (default: when stderr is a terminal)")
    running.add_argument("--quiet", action="store_true", help="no summary tables at the end")
    p.set_defaults(func=_guard(_cmd_run))


# --- report, view, export ----------------------------------------------------------------------
def _cmd_report(args: argparse.Namespace) -> int:
    html = _output_file(args.html, "--html") if args.html else None  # checked before the report is printed
    with open_run(args.run, readonly=True) as store:
        report = build_report(store)
    if args.plots and not report.kind.plots:
        raise _UserError(f"--plots draws episode runs; this run {report.kind.plays}: its figures are its tables "
                         "(text and --html)")
    if args.plots:
        require_matplotlib()  # before the folder is made: a failed --plots leaves nothing behind
    plots = _output_folder(args.plots, "--plots") if args.plots else None
    print(text_report(report))
    if plots is not None:
        for path in write_plots(report.rows, plots):
            print(f"cubebench: wrote {path}", file=sys.stderr)
    if html is not None:
        _write_text(html, report_html(report), "--html")
        print(f"cubebench: wrote {html}", file=sys.stderr)
    return 0


def _cmd_view(args: argparse.Namespace) -> int:
    out = _output_file(args.out, "--out") if args.out else Path(args.run).with_suffix(".viewer.html")
    with open_run(args.run, readonly=True) as store:
        text = viewer_html(store, args.episodes, args.max_episodes or None)
    if args.out is None:
        try:
            out.write_text(text, encoding="utf-8")
        except OSError as err:  # beside a run on read-only media, say
            raise _UserError(f"cannot write the viewer beside the run, {out}: {_os_reason(err)}; "
                             "give --out FILE") from None
    else:
        _write_text(out, text, "--out")
    print(f"cubebench: wrote {out}", file=sys.stderr)
    return 0


def _cmd_export(args: argparse.Namespace) -> int:
    path = _output_file(args.out, "--out") if args.out else None
    with open_run(args.run, readonly=True) as store:
        try:
            out: Any = open(path, "w", newline="", encoding="utf-8") if path else sys.stdout
        except OSError as err:
            raise _UserError(f"--out {path}: cannot write: {_os_reason(err)}") from None
        try:
            n = export_csv(store, out) if args.format == "csv" else export_jsonl(store, out, not args.no_images)
        finally:
            if path:
                out.close()
    print(f"cubebench: exported {n} record(s)", file=sys.stderr)
    return 0


RUN_EXPORT_FORMATS = ("jsonl", "csv")
"""What ``cubebench export`` writes a run's records as."""


def _run_export_format(value: str) -> str:
    """``export --format``: a format other than ours that ``export-tasks`` writes is pointed there."""
    if value in EXPORT_FORMATS and value not in RUN_EXPORT_FORMATS:
        raise argparse.ArgumentTypeError(
            f"export writes a run's records as {' or '.join(RUN_EXPORT_FORMATS)}; {value} files (a suite's episodes, "
            f"items or SFT traces as training data) are written by cubebench export-tasks --format {value}")
    return value


def _add_reading(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("report", help="tables, failure attribution, plots and an HTML report of a run")
    p.add_argument("run", help="the run's .sqlite file")
    p.add_argument("--html", metavar="OUT", help="write a self-contained HTML report (missing folders are created)")
    p.add_argument("--plots", metavar="DIR", help="write the plots as PNG files into DIR (created if missing)")
    p.set_defaults(func=_guard(_cmd_report))

    p = sub.add_parser("view", help="write a self-contained HTML trajectory viewer of a run")
    p.add_argument("run", help="the run's .sqlite file")
    p.add_argument("--out", help="the HTML file (default: next to the run, .viewer.html; missing folders are created)")
    p.add_argument("--episodes", metavar="TEXT", help="only episodes whose key contains TEXT (e.g. face/d8)")
    p.add_argument("--max-episodes", type=count(0), default=200, help="at most N episodes (0: all; default 200)")
    p.set_defaults(func=_guard(_cmd_view))

    p = sub.add_parser("export", help="export a run's episodes as JSON Lines or CSV")
    p.add_argument("run", help="the run's .sqlite file")
    p.add_argument("--format", type=_run_export_format, choices=RUN_EXPORT_FORMATS, required=True,
                   help="jsonl or csv (Parquet files of a suite's tasks: cubebench export-tasks --format parquet)")
    p.add_argument("--out", help="output file (default: stdout; missing folders are created)")
    p.add_argument("--no-images", action="store_true", help="jsonl: drop observation images")
    p.set_defaults(func=_guard(_cmd_export))


# --- export-tasks ---------------------------------------------------------------------------------
def _cmd_export_tasks(args: argparse.Namespace) -> int:
    request = ExportRequest(
        kind=args.kind, out=Path(args.out), format=args.format, suite=args.suite, tier=args.tier,
        obs_format=args.obs_format, depths=tuple(args.depths) if args.depths else None, instances=args.instances,
        tests=tuple(args.tests) if args.tests else None, items=args.items, train_fraction=args.split,
        variants=tuple(args.variants) if args.variants else None,
        seed=args.seed, images=args.images, force=args.force, starts=args.starts, rules=args.rules)
    try:
        summary = export_tasks(request)
    except (ExportError, SplitError) as err:
        raise _UserError(str(err)) from None
    for note in summary.notes:
        print(f"cubebench: {note}", file=sys.stderr)
    if summary.rules:
        print(f"cubebench: items asked under answer rules {rules_text(summary.rules)}", file=sys.stderr)
    for split, path in summary.files.items():
        print(f"cubebench: wrote {path} ({summary.counts[split]} rows)", file=sys.stderr)
    return 0


def _add_export_tasks(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("export-tasks", help="write certified episodes, question items or SFT traces as training data",
                       description="Write a suite's certified episodes, question items or optimal ReAct traces as "
                                   "train/test JSON Lines or Parquet files that Hugging Face datasets loads as they "
                                   "are, split by start state (docs/ecosystem.md#exports-for-training).")
    p.add_argument("--kind", choices=KINDS, required=True,
                   help="episodes: first prompt + optimal solution; sft: whole optimal ReAct conversations; "
                        "items: question items with gold answers")
    p.add_argument("--out", required=True, help="the folder to write train.*, test.* and manifest.json into")
    p.add_argument("--format", choices=EXPORT_FORMATS, default="jsonl", help="jsonl (default) or parquet")
    p.add_argument("--suite", default=None,
                   help="an episode suite (default exp1) or, for items, a question suite (default cube-bench)")
    p.add_argument("--tier", choices=tuple(TIER_SPECS), default=None, help=f"episodes, sft: the tier (default {DEFAULT_TIER})")
    p.add_argument("--obs-format", choices=EXPORT_OBS_FORMATS, default=None,
                   help=f"episodes, sft: how {tier_names('pictured')} are shown: text (default) or image")
    p.add_argument("--depths", type=csv_values(int), default=None, metavar="D1,D2",
                   help="only these depths (items: the depths or ladder levels of every chosen test)")
    p.add_argument("--instances", type=int, default=None, help="episodes, sft: instances per depth (default the suite's)")
    p.add_argument("--starts", choices=(*STARTS, *OLD_STARTS), default=None,
                   help="episodes, sft: training (the default for sft: fresh positions apart from every evaluation "
                        "start in any of its 48 spellings, --instances per depth, drawn with --seed, at the suite's "
                        "depths that have them) or evaluation (the default for episodes: the suite's certified "
                        "evaluation starts, the test set itself; certified is its old name)")
    p.add_argument("--tests", type=csv_values(str), default=None, metavar="T1,T2", help="items: only these tests")
    p.add_argument("--variants", type=csv_values(str), default=None, metavar="V1,V2",
                   help="items: only these variants of each test (e.g. STARE's frames-interleaved)")
    p.add_argument("--items", type=int, default=None, help="items: items per test and depth (default the suite's)")
    p.add_argument("--rules", "--protocol", dest="rules", default=None, metavar="NAME",
                   help="items: the answer rules the questions are asked and their replies read under (--protocol is "
                        "their old name, still read), paper "
                        "(default, as `run`: each paper's own prompt and answer form), strict (one-line forms) or "
                        "release (Cube Bench's code release); the rows' answer is the gold in its final-answer form")
    p.add_argument("--split", type=float, default=0.9, metavar="FRACTION",
                   help="the share of start states in train (default 0.9); the rest is test")
    p.add_argument("--seed", type=int, default=0, help="the split's seed (default 0)")
    p.add_argument("--images", choices=IMAGE_MODES, default="bytes",
                   help="bytes: PNGs in the rows (default; base64 in jsonl); files: PNGs under OUT/images/, paths in "
                        "the rows; none: text only (items showing an image are left out)")
    p.add_argument("--force", action="store_true",
                   help="replace the files of an earlier export in --out (without it, an export never overwrites)")
    p.set_defaults(func=_guard(_cmd_export_tasks))


# --- play -----------------------------------------------------------------------------------------
def _cmd_play(args: argparse.Namespace) -> int:
    colour = False if args.no_colour else None
    play(args.tier, depth=args.depth, scramble=args.scramble, instance=args.instance, reward=args.reward,
         setting=args.tools,
         metric=args.metric, seed=args.seed, max_steps=args.steps, colour=colour, window=args.window)
    return 0


def _add_play(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("play", help="play a tier yourself in the terminal, with the agents' tools")
    p.add_argument("--tier", choices=tuple(TIER_SPECS), default=DEFAULT_TIER)
    p.add_argument("--depth", type=int, default=3, help="scramble depth (default 3)")
    p.add_argument("--scramble", help="start from this move sequence instead of a seeded scramble")
    p.add_argument("--instance", type=int, default=None,
                   help="start from the K-th shipped certified instance of --depth (as the suites do)")
    p.add_argument("--reward", type=unalias_reward, choices=REWARDS, default="none", help="reward (sparse = none)")
    p.add_argument("--tools", choices=TOOL_SETTINGS, default="basic", help="tool setting")
    p.add_argument("--metric", choices=METRICS, default="quarter")
    p.add_argument("--seed", type=int, default=None)
    p.add_argument("--steps", type=int, default=INTERACTION_STEPS, help=f"interaction steps (default {INTERACTION_STEPS})")
    p.add_argument("--no-colour", action="store_true", help="plain letters without ANSI colours")
    p.add_argument("--window", action=argparse.BooleanOptionalAction, default=None,
                   help="show an image tier's observation in a window (default: where a display exists)")
    p.set_defaults(func=_guard(_cmd_play))


def add_subcommands(sub: argparse._SubParsersAction) -> None:
    """Add ``run``, ``report``, ``view``, ``play``, ``export`` and ``export-tasks`` to the ``cubebench`` parser."""
    _add_run(sub)
    _add_reading(sub)
    _add_play(sub)
    _add_export_tasks(sub)
    add_compare(sub, _guard)  # `cubebench compare RUN...`: a paper's published tables beside its suite's runs


def build_parser() -> argparse.ArgumentParser:
    """The ``cubebench`` parser with every subcommand."""
    parser = _Parser(prog="cubebench", description="CubeBench: the Rubik's cube as a benchmark.")
    parser.add_argument("--version", action="version", version=f"cubebench {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    engine_cli.add_subcommands(sub)
    add_subcommands(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``cubebench ARGS``; bad cube input prints one line and exits 2, Ctrl-C exits 130."""
    try:
        args = build_parser().parse_args(argv)
        return int(args.func(args) or 0)
    except CubeInputError as err:
        print(f"cubebench: error: {err}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("cubebench: interrupted", file=sys.stderr)
        return 130
