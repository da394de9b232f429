"""sb3-contrib's ``RecurrentPPO`` on the partial views (Face, Vertex): the library baseline beside ``rnn_ppo``'s GRU.

:class:`PartialSB3VecEnv` is :class:`~.sb3_vec_env.SB3VecEnv` over the compact view (``obs_format="indices"``) with the
previous action appended: the same inputs :class:`~cubebench.agents.rl.rnn_policy.PartialViewPolicy` reads, as a
``MultiDiscrete`` space so SB3 one-hot encodes every sticker's colour and the action (a ``Box`` of colour indices
would reach the network as magnitudes 0-5).  :func:`make_recurrent` builds ``RecurrentPPO("MlpLstmPolicy")`` with
``rnn_ppo``'s settings where the two have the same knob; :func:`evaluate_partial_sb3` plays any SB3 model (LSTM
state carried, reset at every episode start) on the starts of
:func:`~cubebench.training.rl.rnn_ppo.evaluate_partial`, so the pass rates compare with the GRU's.
"""

from __future__ import annotations

from typing import Any, Iterator, Sequence

import numpy as np
from gymnasium import spaces
from stable_baselines3.common.torch_layers import FlattenExtractor

from cubebench.agents.rl.rnn_policy import N_COLOURS
from cubebench.envs.cube_env import INTERACTION_STEPS
from cubebench.envs.vector_env import CubeVectorEnv
from cubebench.generators import Generator
from cubebench.tiers import PARTIAL_TIERS

from .rnn_ppo import PARTIAL_EVAL_SEED, partial_pass_rates
from .sb3_vec_env import SB3VecEnv

SEGMENT = 32
"""Rollout steps per sub-env (``n_steps``), as ``rnn_ppo``'s ``--n-steps``: the LSTM's backpropagation window."""


def with_prev(obs: np.ndarray, prev: np.ndarray) -> np.ndarray:
    """The policy's input: the visible colour indices (N, k) and the previous action (N,; -1 at an episode's first
    step) stored as ``prev + 1`` in one more column."""
    return np.concatenate([obs, (np.asarray(prev) + 1)[:, None]], axis=1).astype(np.int64)


class PartialSB3VecEnv(SB3VecEnv):
    """SB3 ``VecEnv`` over a partial tier's compact view, each observation followed by the previous action."""

    def __init__(self, env: CubeVectorEnv) -> None:
        if env.tier not in PARTIAL_TIERS or len(env.single_observation_space.shape or ()) != 1:
            raise ValueError("PartialSB3VecEnv needs a Face or Vertex CubeVectorEnv with obs_format='indices'")
        super().__init__(env)
        n_visible = int(np.prod(env.single_observation_space.shape or (0,)))
        self.observation_space = spaces.MultiDiscrete([N_COLOURS] * n_visible + [len(env.action_names) + 1])
        self._prev = np.full(self.num_envs, -1, dtype=np.int64)

    def reset(self) -> np.ndarray:
        self._prev[:] = -1
        return with_prev(super().reset(), self._prev)

    def step_wait(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[dict[str, Any]]]:
        obs, rew, done, infos = super().step_wait()  # refuses a step without step_async's actions
        act = np.asarray(self._actions)
        for i in np.flatnonzero(done):
            infos[i]["terminal_observation"] = with_prev(infos[i]["terminal_observation"][None], act[i:i + 1])[0]
        self._prev = np.where(done, -1, act)
        return with_prev(obs, self._prev), rew, done, infos


class OneHotFlatten(FlattenExtractor):
    """SB3's flatten extractor (after its one-hot of each ``MultiDiscrete`` entry) with a Python ``int`` width:
    SB3 sums the space's ``nvec`` into a NumPy integer, which ``torch.nn.LSTM`` refuses as its ``input_size``."""

    def __init__(self, observation_space: spaces.Space) -> None:
        super().__init__(observation_space)
        self._features_dim = int(self._features_dim)


def make_recurrent(env: PartialSB3VecEnv, seed: int, hidden: int = 128) -> Any:
    """``RecurrentPPO`` with an LSTM of ``hidden`` units (actor and critic each, the library's default layout) and
    ``rnn_ppo``'s PPO settings: segments of 32 steps, 4 epochs, minibatches of 64 whole segments, lr 1e-3,
    gamma 0.95, entropy 0.01."""
    from sb3_contrib import RecurrentPPO

    return RecurrentPPO("MlpLstmPolicy", env, n_steps=SEGMENT, batch_size=64 * SEGMENT, n_epochs=4,
                        learning_rate=1e-3, gamma=0.95, ent_coef=0.01, seed=seed, verbose=0, device="cpu",
                        policy_kwargs={"lstm_hidden_size": hidden, "net_arch": [hidden],
                                       "features_extractor_class": OneHotFlatten})


def play(model: Any, env: CubeVectorEnv, obs: np.ndarray, steps: int,
         deterministic: bool = True) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]:
    """``steps`` steps of every sub-env of ``env`` (``SAME_STEP`` autoreset) from ``obs``, its fresh episodes:
    yields ``(input, action, terminated, truncated)`` per step.  The model's recurrent state (``None`` for a
    memoryless model) is carried from step to step and dropped where an episode starts, via ``episode_start``."""
    prev = np.full(env.num_envs, -1, dtype=np.int64)
    starts, state = np.ones(env.num_envs, dtype=bool), None
    for _ in range(steps):
        x = with_prev(obs, prev)
        act, state = model.predict(x, state=state, episode_start=starts, deterministic=deterministic)
        obs, _, term, trunc, _ = env.step(act)
        starts = term | trunc
        prev = np.where(starts, -1, act)
        yield x, act, term, trunc


def evaluate_partial_sb3(model: Any, tier: str, depths: Sequence[int], episodes: int, seed: int = PARTIAL_EVAL_SEED,
                         budget: int = INTERACTION_STEPS, generator: Generator | None = None,
                         deterministic: bool = True) -> dict[str, float]:
    """:func:`~cubebench.training.rl.rnn_ppo.partial_pass_rates` of an SB3 model trained on
    :class:`PartialSB3VecEnv`: the same starts, seeds and budget as the GRU policies' evaluation."""

    def steps(env: CubeVectorEnv, obs: np.ndarray, depth: int) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        return ((term, trunc) for _, _, term, trunc in play(model, env, obs, budget, deterministic))

    return partial_pass_rates(tier, depths, episodes, steps, seed=seed, budget=budget, generator=generator)
