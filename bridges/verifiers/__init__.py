"""CubeBench as a verifiers environment: ``vf.load_environment("cubebench.bridges.verifiers", ...)``.

Needs the ``verifiers`` extra (``pip install "cubebench[verifiers]"``, Python >= 3.11); see docs/ecosystem.md.
Nothing here re-implements the benchmark: rollouts are the runner's episodes (``play_episode``) played by
our ReAct agent (its prompt, ``Action:`` parser, tools and budgets) over the rollout's model
(:mod:`.relay`), on the certified instances the runner plans (:mod:`.dataset`), scored from the episode
record with the env's own sparse and dense rewards (:mod:`.rubric`).
"""

try:
    import verifiers  # noqa: F401 - only to fail early with the extra's name
    import datasets  # noqa: F401
except ModuleNotFoundError as err:  # the message names the extra; the name lets callers tell which is missing
    raise ModuleNotFoundError("cubebench.bridges.verifiers needs verifiers: pip install 'cubebench[verifiers]'",
                              name=err.name) from err

from .dataset import episode_grid, episode_rows, split_plan
from .environment import DENSE_REWARDS, RELAY_KEY, CubeBenchEnv, load_environment
from .relay import Ask, EpisodeRelay, RelayClient, RelayClosed, first_prompt
from .rubric import RECORD_KEY, CubeBenchRubric, record_of

__all__ = [
    "Ask", "CubeBenchEnv", "CubeBenchRubric", "DENSE_REWARDS", "EpisodeRelay", "RECORD_KEY", "RELAY_KEY", "RelayClient",
    "RelayClosed", "episode_grid", "episode_rows", "first_prompt", "load_environment", "record_of", "split_plan",
]
