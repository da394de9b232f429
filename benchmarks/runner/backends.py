"""Where episodes are played: inline, a thread pool, a process pool, or a Ray cluster.

Every backend yields ``(spec, record)`` pairs as episodes (or question items)
finish; only the driver (the caller) writes to the result store, so store and
resume semantics are the same for all of them.  Workers build their agents from
the picklable :class:`~.specs.AgentSpec` and play with
:func:`~.protocols.play_spec` (an episode, an item or a game, by the spec's protocol).  Closing the iterator early (a ``--limit``,
the cost cap, Ctrl-C) stops handing out work; episodes still running are
abandoned and stay unfinished in the store, to be played again on resume.

The ``ray`` backend connects once per process and stays connected (a ladder's waves reuse the Ray job
and its warm worker processes); Ray disconnects, and stops a local cluster it started, at exit.  An
episode whose worker process (or node) dies is played again from its start by Ray, up to
:data:`RAY_RETRIES` more times (the driver stores only finished records, so nothing half-played is ever
stored); after that the session ends with :class:`WorkersLost`, every finished episode stored and the rest
left for a resume.  An episode's own exception is not retried.

The ``process`` backend's workers never outlive the driver: closed early, the
pool's workers are terminated; and each worker dies with the driver process
however it ends (``kill -9`` included): on Linux the kernel kills it
(``prctl(PR_SET_PDEATHSIG, SIGKILL)``), elsewhere, and as a fallback, a
watchdog thread in the worker exits within a second of the driver's death.
Workers ignore SIGINT: a Ctrl-C reaches the whole process group, and the
driver alone handles it.
"""

from __future__ import annotations

import ctypes
import json
import multiprocessing
import os
import queue
import signal
import sys
import threading
import time
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from typing import Any, Iterator

from cubebench.agents.records import EpisodeRecord
from cubebench.extras import install_hint

from .execute import PlaySettings
from .planning import PlannedSpec
from .protocols import play_spec, protocol_named
from .specs import AgentFactory, AgentSpec

BACKENDS = ("local", "process", "ray")
Result = tuple[PlannedSpec, EpisodeRecord]
RAY_RETRIES = 2
"""How many more times Ray plays an episode whose worker process or node died (not on the episode's own error)."""


class WorkersLost(RuntimeError):
    """An episode's Ray worker died on every try: the session ends, the finished episodes stay stored."""


class BackendUnavailable(RuntimeError):
    """A backend's library is not installed: one line naming the extra, raised before a run file is made."""


def check_backend(name: str) -> None:
    """Refuse a backend that cannot run here before anything is created or loaded: an unknown name
    (``ValueError``) or the ``ray`` backend without Ray (:class:`BackendUnavailable`)."""
    if name not in BACKENDS:
        raise ValueError(f"unknown backend {name!r}; expected one of {BACKENDS}")
    if name == "ray":
        import_ray()


def run_backend(name: str, episodes: list[PlannedSpec], factory: AgentFactory, agent_spec: AgentSpec,
                settings: PlaySettings, concurrency: int, ray_address: str | None = None) -> Iterator[Result]:
    """Play ``episodes`` on backend ``name``, yielding each as it finishes (in any order)."""
    if name == "local":
        if concurrency <= 1:
            return _inline(episodes, factory, settings)
        return _threads(episodes, factory, settings, concurrency)
    if name == "process":
        return _processes(episodes, agent_spec, settings, concurrency)
    if name == "ray":
        return _ray(episodes, agent_spec, settings, concurrency, ray_address)
    raise ValueError(f"unknown backend {name!r}; expected one of {BACKENDS}")


def _inline(episodes: list[PlannedSpec], factory: AgentFactory, settings: PlaySettings) -> Iterator[Result]:
    for ep in episodes:
        yield ep, play_spec(ep, factory, settings)


def _threads(episodes: list[PlannedSpec], factory: AgentFactory, settings: PlaySettings,
             n: int) -> Iterator[Result]:
    """Daemon worker threads (for API agents, which wait on the network).

    Daemon threads, not a ThreadPoolExecutor: at exit the interpreter would
    join the executor's threads and wait for every running episode.
    """
    todo: queue.Queue[PlannedSpec] = queue.Queue()
    done: queue.Queue[tuple[PlannedSpec, EpisodeRecord | None, BaseException | None]] = queue.Queue()
    stop = threading.Event()
    for ep in episodes:
        todo.put(ep)

    def work() -> None:
        while not stop.is_set():
            try:
                ep = todo.get_nowait()
            except queue.Empty:
                return
            try:
                done.put((ep, play_spec(ep, factory, settings), None))
            except BaseException as err:  # noqa: BLE001 - handed to the driver, which re-raises
                done.put((ep, None, err))

    for i in range(min(n, len(episodes))):
        threading.Thread(target=work, name=f"cubebench-episode-{i}", daemon=True).start()
    try:
        for _ in range(len(episodes)):
            ep, record, err = _get(done)
            if err is not None:
                raise err
            assert record is not None
            yield ep, record
    finally:
        stop.set()


def _get(q: queue.Queue) -> Any:
    """``q.get()`` that stays interruptible by Ctrl-C in the main thread."""
    while True:
        try:
            return q.get(timeout=0.2)
        except queue.Empty:
            continue


# --- processes -------------------------------------------------------------------------------
_WORKER_FACTORIES: dict[str, AgentFactory] = {}


def _worker_factory(agent_spec: AgentSpec, protocol: str) -> AgentFactory:
    """One factory per worker process, spec and protocol (shares e.g. the local model's server)."""
    key = json.dumps([agent_spec.to_dict(), protocol], sort_keys=True)
    if key not in _WORKER_FACTORIES:
        _WORKER_FACTORIES[key] = protocol_named(protocol).factory(agent_spec)
    return _WORKER_FACTORIES[key]


PARENT_WATCH_S = 0.5
"""How often a worker's watchdog looks whether the driver is still alive."""


def init_worker(driver_pid: int) -> None:
    """Process-pool worker initializer: ignore Ctrl-C (the driver handles it) and die with the driver."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _set_parent_death_signal()
    if os.getppid() != driver_pid:  # the driver died before the kernel could be asked
        os._exit(1)
    threading.Thread(target=_watch_driver, args=(driver_pid,), name="cubebench-driver-watch", daemon=True).start()


def _set_parent_death_signal() -> bool:
    """Linux: have the kernel SIGKILL this process when its parent dies; ``False`` where it cannot."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        PR_SET_PDEATHSIG = 1
        return libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _watch_driver(driver_pid: int) -> None:
    """Exit the worker at once when the driver is gone (reparented, or its sentinel pipe closed)."""
    parent = multiprocessing.parent_process()
    while True:
        if os.getppid() != driver_pid or (parent is not None and not parent.is_alive()):
            os._exit(1)
        time.sleep(PARENT_WATCH_S)


def play_in_worker(ep: PlannedSpec, agent_spec: AgentSpec, settings: PlaySettings) -> dict[str, Any]:
    """Worker entry point: play one episode (or item), return the record as a plain dict."""
    factory = _worker_factory(agent_spec, ep.protocol)
    return play_spec(ep, factory, settings).to_dict()


def _processes(episodes: list[PlannedSpec], agent_spec: AgentSpec, settings: PlaySettings,
               n: int) -> Iterator[Result]:
    """A spawn-started process pool (renderers and numba do not survive ``fork`` well)."""
    ctx = multiprocessing.get_context("spawn")
    pool = ProcessPoolExecutor(max_workers=max(1, n), mp_context=ctx, initializer=init_worker,
                               initargs=(os.getpid(),))
    window = max(1, n) * 2
    pending: dict[Future, PlannedSpec] = {}
    queue_ = list(reversed(episodes))
    try:
        while queue_ or pending:
            while queue_ and len(pending) < window:
                ep = queue_.pop()
                pending[pool.submit(play_in_worker, ep, agent_spec, settings)] = ep
            finished, _ = wait(list(pending), timeout=0.5, return_when=FIRST_COMPLETED)
            for fut in finished:
                ep = pending.pop(fut)
                yield ep, EpisodeRecord.from_dict(fut.result())
    finally:
        workers = list((getattr(pool, "_processes", None) or {}).values())
        pool.shutdown(wait=False, cancel_futures=True)
        if pending:  # closed early (--limit, cost cap, Ctrl-C, an error): abandon the running episodes now
            _stop(workers)
        else:
            pool.shutdown(wait=True)


def _stop(workers: list[Any], grace_s: float = 2.0) -> None:
    """Terminate worker processes, then kill those still alive after ``grace_s``."""
    for proc in workers:
        if proc.is_alive():
            proc.terminate()
    deadline = time.monotonic() + grace_s
    for proc in workers:
        proc.join(max(0.0, deadline - time.monotonic()))
        if proc.is_alive():
            proc.kill()
            proc.join(1.0)


# --- Ray -------------------------------------------------------------------------------------
def import_ray() -> Any:
    """The ``ray`` module, or :class:`BackendUnavailable` naming the extra to install."""
    try:
        import ray
    except ImportError:
        raise BackendUnavailable(f"--backend ray needs Ray, which is not installed: {install_hint('ray')}") from None
    return ray


_RAY_CONNECTED: dict[str, str | None] = {}
"""The address this process connected Ray to (``address``: ``None`` for a local cluster), if it did."""


def _ray_connect(ray: Any, address: str | None) -> None:
    """Connect to the cluster at ``address`` once per process, and stay connected.

    A ladder's rounds are played in waves (one backend call each); a new connection per wave would be a
    new Ray job, whose tasks need fresh worker processes (each importing cubebench) on every node.  Ray
    disconnects when the process exits.  A connection this process did not make (the caller's
    ``ray.init``) is used as it is; one it made to another address is replaced.
    """
    if ray.is_initialized():
        if "address" not in _RAY_CONNECTED or _RAY_CONNECTED["address"] == address:
            return
        ray.shutdown()
        _RAY_CONNECTED.clear()
    ray.init(address=address, include_dashboard=False,
             runtime_env={"env_vars": {"PYTHONPATH": os.pathsep.join(_pythonpath())}})
    _RAY_CONNECTED["address"] = address


def _ray(episodes: list[PlannedSpec], agent_spec: AgentSpec, settings: PlaySettings, n: int,
         address: str | None) -> Iterator[Result]:
    """Ray tasks (one CPU each) on the cluster at ``address`` (a local one when ``None``).

    At most ``n`` tasks are in flight (``n <= 0``: the cluster's CPU count);
    the driver collects them with ``ray.wait`` and writes each to the store.  Closed early, the tasks
    still in flight are cancelled (their episodes stay unplayed in the store, for a resume).
    """
    ray = import_ray()
    _ray_connect(ray, address)
    remote = ray.remote(num_cpus=1, max_retries=RAY_RETRIES)(play_in_worker)
    lost = _lost_worker_errors(ray)
    window = n if n > 0 else max(1, int(ray.cluster_resources().get("CPU", 1)))
    queue_ = list(reversed(episodes))
    pending: dict[Any, PlannedSpec] = {}
    try:
        while queue_ or pending:
            while queue_ and len(pending) < window:
                ep = queue_.pop()
                pending[remote.remote(ep, agent_spec, settings)] = ep
            ready, _ = ray.wait(list(pending), num_returns=1, timeout=0.5)
            for ref in ready:
                ep = pending.pop(ref)
                try:
                    data = ray.get(ref)
                except lost as err:
                    raise WorkersLost(f"the Ray worker playing {ep.key} died {RAY_RETRIES + 1} times "
                                      f"({type(err).__name__}: {str(err).splitlines()[0] if str(err) else ''})") from None
                yield ep, EpisodeRecord.from_dict(data)
    finally:
        for ref in pending:
            ray.cancel(ref, force=True)


def _lost_worker_errors(ray: Any) -> tuple[type[BaseException], ...]:
    """Ray's errors for a task whose worker process, node or result was lost (not the task's own exception)."""
    names = ("WorkerCrashedError", "NodeDiedError", "ObjectLostError", "LocalRayletDiedError")
    return tuple(getattr(ray.exceptions, name) for name in names if hasattr(ray.exceptions, name))


def _pythonpath() -> list[str]:
    """The driver's ``PYTHONPATH``, passed on so Ray workers import what the driver imports.

    ``cubebench`` itself comes from the installed (or editable) package, as in the driver; the
    repository root is never added: its ``agents/`` folder would shadow other packages' ``agents``.
    """
    return [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
