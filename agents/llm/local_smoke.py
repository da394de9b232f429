"""Smoke test and timings of the embedded local model (:mod:`.local`), as a command.

``python -m cubebench.agents.llm.local_smoke [--threads N] [--replies N]`` starts the server, times
a few grammar-constrained ReAct replies and prints the figures ``docs/llm.md`` quotes as JSON.
It is a module of its own so that running it does not re-run :mod:`.local`, which the package
imports.
"""

from __future__ import annotations

import argparse
import json
import os
from typing import Any

from .grammar import react_grammar
from .local import LocalModelServer
from .openai_client import OpenAIChatClient
from .retry import RetryPolicy

__all__ = ["smoke_test", "main"]


_SMOKE_PROMPT = [
    {"role": "system", "content": "You control a Rubik's cube. Reply with one Thought line and "
                                  "one Action line."},
    {"role": "user", "content": "Observation: the cube is scrambled. Tools: move, rotate, "
                                "observe, done. What next?"},
]


def smoke_test(n_replies: int = 3, *, n_threads: int = 1, max_tokens: int = 160) -> dict[str, Any]:
    """Start the local server, ask ``n_replies`` grammar-constrained ReAct replies, stop it.

    Returns the timings the docs quote: server startup, first-reply latency (cold: prompt read
    and decode), and output tokens per second over the later replies (prompt cached by the
    server, so mostly decode speed). ``python -m cubebench.agents.llm.local_smoke`` prints them
    as JSON.
    """
    grammar = react_grammar(["move", "rotate", "observe", "done"])
    with LocalModelServer(n_threads=n_threads) as server:
        with OpenAIChatClient(server.model_name, base_url=server.base_url, api_key="local",
                              temperature=0.0, seed=0, max_tokens=max_tokens, timeout_s=600,
                              retry=RetryPolicy(max_attempts=1)) as client:
            replies = [client.complete(_SMOKE_PROMPT, extra={"grammar": grammar})
                       for _ in range(n_replies)]
        startup_s = server.startup_s
    later = replies[1:] or replies
    return {
        "model": str(server.model_path), "n_threads": n_threads, "startup_s": startup_s,
        "prompt_tokens": replies[0].input_tokens, "first_reply_s": replies[0].latency_s,
        "first_reply_tokens": replies[0].output_tokens,
        "later_tokens_per_s": sum(r.output_tokens for r in later) / sum(r.latency_s for r in later),
        "replies": [r.text for r in replies],
    }


def main(argv: list[str] | None = None) -> None:
    """``python -m cubebench.agents.llm.local_smoke [--threads N] [--replies N]``: print
    :func:`smoke_test` as JSON."""
    parser = argparse.ArgumentParser(description="Smoke-test the embedded local model.")
    parser.add_argument("--threads", type=int, default=1, help="llama.cpp threads (default 1)")
    parser.add_argument("--replies", type=int, default=3, help="replies to time (default 3)")
    args = parser.parse_args(argv)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    result = smoke_test(args.replies, n_threads=args.threads)
    print(json.dumps({**result, "load_avg_1min_before": load}, indent=2))


if __name__ == "__main__":
    main()
