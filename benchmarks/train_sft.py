"""Entry point kept for `python benchmarks/train_sft.py`: the program is `python -m cubebench.training.react_sft`."""

import sys

from cubebench.training.react_sft import main

if __name__ == "__main__":
    sys.exit(main())
