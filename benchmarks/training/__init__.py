"""Training models on CubeBench: labelled positions kept apart from every evaluated one, the compact policy's
fine-tuning (LoRA SFT, then GRPO), its probe accuracy, and the helpers the training programs share.

Runnable as modules: ``python -m cubebench.training.policy_sft`` and ``python -m cubebench.training.policy_grpo``
(docs/training.md).  This layer sits above the runner (it reads the shipped suites to keep their items out of
training data) and below the bridges.
"""
