"""Entry point kept for `python benchmarks/train_grpo.py`: the program is `python -m cubebench.training.react_grpo`."""

import sys

from cubebench.training.react_grpo import main

if __name__ == "__main__":
    sys.exit(main())
