"""The run protocols as objects: what a run plays, and everything that differs between kinds of run.

=============  ==========================  ==========================================================
name           class                       plays
=============  ==========================  ==========================================================
``episodes``   :class:`EpisodesProtocol`   an agent acting on a cube through a tier
``questions``  :class:`QuestionsProtocol`  an answerer answering question items (and ladders)
``multi``      :class:`MultiProtocol`      teams on the multi-agent envs of the games table
=============  ==========================  ==========================================================

Each implements :class:`RunProtocol` (check the agent, configure, plan, play, warm up, report, view,
export columns); the rest of the runner dispatches through :func:`protocol_named` /
:func:`protocol_for` and never on a protocol's name.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any, Mapping

from ..execute import PlaySettings
from ..plan import Spec
from ..suite_fields import SuiteError
from .base import RunProtocol
from .episodes import EpisodesProtocol
from .multi import MultiProtocol
from .questions import QuestionsProtocol

__all__ = ["RunProtocol", "EpisodesProtocol", "QuestionsProtocol", "MultiProtocol", "PROTOCOLS", "SELECTORS", "protocol_named",
           "protocol_for", "play_spec"]

PROTOCOLS: Mapping[str, RunProtocol] = MappingProxyType(
    {p.name: p for p in (EpisodesProtocol(), QuestionsProtocol(), MultiProtocol())})
"""Every protocol by name."""
SELECTORS = tuple(p.selector for p in PROTOCOLS.values())
"""The ``cubebench run`` options that pick a part of a suite, one per protocol (``tiers``, ``tests``, ``games``)."""


def protocol_named(name: str) -> RunProtocol:
    """The protocol called ``name`` (a stored run's ``meta["protocol"]``)."""
    if name not in PROTOCOLS:
        raise SuiteError(f"unknown run protocol {name!r}; the protocols are {', '.join(PROTOCOLS)}")
    return PROTOCOLS[name]


def protocol_for(suite: Any) -> RunProtocol:
    """The protocol a suite's runs play."""
    return protocol_named(suite.protocol)


def play_spec(spec: Spec, factory: Any, settings: PlaySettings) -> Any:
    """Play a planned episode or game, or ask a planned item: what a backend's worker does with each spec."""
    return protocol_named(spec.protocol).play(spec, factory, settings)
