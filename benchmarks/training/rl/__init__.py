"""Training the MLP policy-gradient baseline (the ``mlp`` agent of ``cubebench.agents.rl``).

``python -m cubebench.training.rl.train`` trains it with PPO or REINFORCE on the native vector env,
``python -m cubebench.training.rl.sb3`` with Stable-Baselines3, ``python -m cubebench.training.rl.selfplay``
fine-tunes it on positions scramblers find, and ``python -m cubebench.training.rl.curves`` draws a run's
training curves.  The policy network, its checkpoints and the agent that plays it stay in the agents layer
(``cubebench.agents.rl``): playing a trained policy needs none of this.  Torch is needed (the ``rl`` extra);
see docs/rl.md.
"""
