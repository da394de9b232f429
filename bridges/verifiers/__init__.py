"""CubeBench as a verifiers environment: ``load_environment(...)`` under verifiers 0.4 (``verifiers.v1``) and
0.2-0.3 (``vf.MultiTurnEnv``; also ``vf.load_environment("cubebench.bridges.verifiers", ...)``).

Needs the ``verifiers`` extra (``pip install -e ".[verifiers]"`` in the checkout, Python >= 3.11); see docs/ecosystem.md.
Nothing here re-implements the benchmark: rollouts are the runner's episodes (``play_episode``) played by
our ReAct agent (its prompt, ``Action:`` parser, tools and budgets) over the rollout's model
(:mod:`.relay`), on the certified instances the runner plans (:mod:`.dataset`), scored from the episode
record with the env's own sparse and dense rewards (:mod:`.game`).  ``load_question_environment(...)``
(:mod:`.questions`, verifiers 0.3 and 0.4) serves a question suite's one-question items under answer rules,
scored by the runner's verifier references.  :mod:`.multiturn` (0.3) and
:mod:`.taskset` (0.4) adapt these to each verifiers API.
"""

from cubebench.extras import install_hint

try:
    import verifiers  # noqa: F401 - only to fail early with the extra's name
    import datasets  # noqa: F401
except ModuleNotFoundError as err:  # the message names the extra; the name lets callers tell which is missing
    raise ModuleNotFoundError(f"cubebench.bridges.verifiers needs verifiers: {install_hint('verifiers')}",
                              name=err.name) from err

from .dataset import RowShortfallWarning, episode_grid, episode_rows, split_plan
from .environment import ADAPTER, API, load_environment
from .questions import load_environment as load_question_environment
from .game import SHAPING_REWARDS, RECORD_KEY, EpisodeTurns, Options, options, record_of
from .relay import Ask, EpisodeRelay, RelayClient, RelayClosed, first_prompt

CubeBenchEnv = ADAPTER.CubeBenchEnv
"""The environment class of the installed API (0.4: a ``verifiers.v1`` ``Env``; 0.3: a ``vf.MultiTurnEnv``).
The rest of each API's classes live in its adapter: :mod:`.taskset` (``CubeBenchTaskset``, ``CubeBenchTask``,
``CubeBenchHarness``) and :mod:`.multiturn` (``CubeBenchRubric``)."""

__all__ = [
    "ADAPTER", "API", "Ask", "CubeBenchEnv", "EpisodeRelay", "EpisodeTurns", "Options", "SHAPING_REWARDS",
    "RECORD_KEY", "RelayClient", "RelayClosed", "RowShortfallWarning", "episode_grid", "episode_rows",
    "first_prompt", "load_environment", "load_question_environment", "options", "record_of", "split_plan",
]
