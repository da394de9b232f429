"""Training models on CubeBench, in one place: labelled positions kept apart from every evaluated one, the compact
policy's fine-tuning (LoRA SFT, then GRPO), the ReAct agent's fine-tuning on optimal traces (SFT, then GRPO), its
probe accuracy, the helpers the training programs share (:mod:`.grpo`, :mod:`.models`, :mod:`.run_state`), and the
MLP baseline's trainers (:mod:`.rl`).

Runnable as modules: ``python -m cubebench.training.policy_sft``, ``.policy_grpo``, ``.react_sft``, ``.react_grpo``
(docs/training.md) and ``python -m cubebench.training.rl.train`` (docs/rl.md).  This layer sits above the runner (it reads the shipped suites to keep their items out of
training data) and below the bridges.
"""
