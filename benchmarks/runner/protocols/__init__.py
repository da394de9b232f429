"""The run protocols as objects: what a run plays, and everything that differs between kinds of run.

=============  ==========================  ==========================================================
name           class                       plays
=============  ==========================  ==========================================================
``episodes``   :class:`EpisodesProtocol`   an agent acting on a cube through a tier
``questions``  :class:`QuestionsProtocol`  an answerer answering question items (and ladders)
``multi``      :class:`MultiProtocol`      teams on the multi-agent envs of the games table
=============  ==========================  ==========================================================

Each is a folder of this package (its suite, plan rows, play, report and ``RunProtocol``) and one
:func:`register` line below; the rest of the runner dispatches through :func:`protocol_named`, :func:`protocol_for`
and :func:`protocol_for_schema`, and never on a protocol's name (docs/architecture.md, "Adding a protocol").
"""

from __future__ import annotations

import argparse
from types import MappingProxyType
from typing import Any, Mapping

from ..execute import PlaySettings
from ..planning import PlannedSpec, forget_row_type
from ..suite_fields import SuiteError
from .episodes.protocol import EpisodesProtocol
from .multi.protocol import MultiProtocol
from .questions.protocol import QuestionsProtocol
from .run_protocol import RunProtocol

__all__ = ["RunProtocol", "EpisodesProtocol", "QuestionsProtocol", "MultiProtocol", "PROTOCOLS", "register",
           "unregister", "selectors", "protocol_named", "protocol_for", "protocol_for_schema", "play_spec"]

_REGISTRY: dict[str, RunProtocol] = {}
PROTOCOLS: Mapping[str, RunProtocol] = MappingProxyType(_REGISTRY)
"""Every registered protocol by name, in registration order: the first is the default (it reads a suite file
without a ``schema``; a run stored without ``meta["protocol"]`` plays episodes: ``store.UNNAMED_PROTOCOL``)."""


def register(protocol: RunProtocol) -> RunProtocol:
    """Make ``protocol`` one that suites, runs and the command know; its name, suite schema, selector and options
    must be its own (``ValueError`` otherwise)."""
    for other in _REGISTRY.values():
        for what in ("name", "schema", "selector"):
            if getattr(other, what) == getattr(protocol, what):
                raise ValueError(f"run protocol {protocol.name!r}: its {what} {getattr(protocol, what)!r} is "
                                 f"{other.name!r}'s")
    options = argparse.ArgumentParser(add_help=False)
    for each in (*_REGISTRY.values(), protocol):
        try:
            each.add_options(options.add_argument_group(each.name))
        except argparse.ArgumentError as err:
            raise ValueError(f"run protocol {protocol.name!r}: its options clash with the registered ones' "
                             f"({err})") from None
    _REGISTRY[protocol.name] = protocol
    return protocol


def unregister(name: str) -> None:
    """Forget the protocol called ``name`` (a plugin's, or a test's); the shipped ones stay."""
    if name in SHIPPED:
        raise ValueError(f"run protocol {name!r} ships with cubebench and cannot be unregistered")
    _REGISTRY.pop(name, None)
    forget_row_type(name)


def selectors() -> tuple[str, ...]:
    """The ``cubebench run`` options that pick a part of a suite, one per protocol (``tiers``, ``tests``, ``games``)."""
    return tuple(p.selector for p in _REGISTRY.values())


# The shipped protocols.  Adding one: its folder, its import above and a line here.
register(EpisodesProtocol())
register(QuestionsProtocol())
register(MultiProtocol())
SHIPPED = frozenset(_REGISTRY)


def protocol_named(name: str) -> RunProtocol:
    """The protocol called ``name`` (a stored run's ``meta["protocol"]``)."""
    if name not in PROTOCOLS:
        raise SuiteError(f"unknown run protocol {name!r}; the protocols are {', '.join(PROTOCOLS)}")
    return PROTOCOLS[name]


def protocol_for_schema(schema: Any, source: str) -> RunProtocol:
    """The protocol whose suites a file with this ``schema`` holds (``None``: the default protocol); a
    :class:`SuiteError` naming the schemas this version reads for any other (``source`` names the file)."""
    if schema is None:
        return next(iter(_REGISTRY.values()))
    for protocol in _REGISTRY.values():
        if protocol.schema == schema:
            return protocol
    known = ", ".join(f"{p.schema!r} ({p.plays})" for p in _REGISTRY.values())
    shown = repr(schema[:80]) if isinstance(schema, str) else str(schema)[:80]
    raise SuiteError(f"{source}: unknown schema {shown}; expected {known}")


def protocol_for(suite: Any) -> RunProtocol:
    """The protocol a suite's runs play."""
    return protocol_named(suite.protocol)


def play_spec(spec: PlannedSpec, factory: Any, settings: PlaySettings) -> Any:
    """Play a planned episode or game, or ask a planned item: what a backend's worker does with each spec."""
    return protocol_named(spec.protocol).play(spec, factory, settings)
