"""SB3's ``VecEnv`` interface over the native vector env: SB3's PPO, A2C, DQN and sb3-contrib's RecurrentPPO
train on the Numba-stepped batch (reset on the same step, the last observation in
``info["terminal_observation"]``, ``TimeLimit.truncated``)."""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
from gymnasium.vector import AutoresetMode
from stable_baselines3.common.vec_env import VecEnv

from cubebench.envs.vector_env import CubeVectorEnv


class SB3VecEnv(VecEnv):
    """SB3 ``VecEnv`` over a :class:`CubeVectorEnv` in ``SAME_STEP`` autoreset mode."""

    def __init__(self, env: CubeVectorEnv) -> None:
        if env.autoreset_mode != AutoresetMode.SAME_STEP:
            raise ValueError("SB3VecEnv needs CubeVectorEnv(autoreset_mode=AutoresetMode.SAME_STEP)")
        self.venv = env
        super().__init__(env.num_envs, env.single_observation_space, env.single_action_space)
        self._actions: np.ndarray | None = None

    def reset(self) -> np.ndarray:
        seeds = None if all(s is None for s in self._seeds) else [s for s in self._seeds]
        obs, _ = self.venv.reset(seed=seeds, options=self._options[0] or None)
        self._reset_seeds()
        self._reset_options()
        return obs

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = np.asarray(actions, dtype=np.int64).reshape(self.num_envs)

    def step_wait(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[dict[str, Any]]]:
        if self._actions is None:
            raise RuntimeError("step_wait() needs the actions from step_async()")
        obs, rew, term, trunc, info = self.venv.step(self._actions)
        done = term | trunc
        infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        for i in np.flatnonzero(done):
            fin = info["final_info"]
            infos[i] = {"terminal_observation": info["final_obs"][i], "TimeLimit.truncated": bool(trunc[i]),
                        "is_success": bool(term[i]), "depth": int(fin["depth"][i]),
                        "episode_steps": int(fin["steps"][i])}
        return obs, rew.astype(np.float32), done, infos

    def close(self) -> None:
        self.venv.close()

    def get_attr(self, attr_name: str, indices: Any = None) -> list[Any]:
        return [getattr(self.venv, attr_name) for _ in self._get_indices(indices)]

    def set_attr(self, attr_name: str, value: Any, indices: Any = None) -> None:
        setattr(self.venv, attr_name, value)

    def env_method(self, method_name: str, *args: Any, indices: Any = None, **kwargs: Any) -> list[Any]:
        return [getattr(self.venv, method_name)(*args, **kwargs) for _ in self._get_indices(indices)]

    def env_is_wrapped(self, wrapper_class: type, indices: Any = None) -> list[bool]:
        return [False for _ in self._get_indices(indices)]

    def _get_indices(self, indices: Any) -> Sequence[int]:
        if indices is None:
            return range(self.num_envs)
        return [indices] if isinstance(indices, int) else list(indices)
