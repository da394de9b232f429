"""Per-episode token and cost budgets, and the price table that turns tokens into dollars.

One :class:`Budget` is created per episode and shared by every model call in it. Before a call it
refuses when the call would certainly overrun (the budget is spent, or the estimated prompt alone
does not fit); after a call it charges the real usage and raises when the limit was crossed, with
the reply attached so the episode record keeps it.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from .reply import ModelReply

__all__ = ["Budget", "BudgetExceeded", "PRICES_USD_PER_MTOK", "price_for", "cost_usd"]

#: USD per million (input, output) tokens, from the providers' public price pages (2025).
#: Matched by longest model-name prefix; unknown models (local, vLLM, Ollama) cost 0.
#: Pass ``price=(in, out)`` to a client to override.
PRICES_USD_PER_MTOK: dict[str, tuple[float, float]] = {
    "gpt-4o-mini": (0.15, 0.60),
    "gpt-4o": (2.50, 10.00),
    "gpt-4.1-nano": (0.10, 0.40),
    "gpt-4.1-mini": (0.40, 1.60),
    "gpt-4.1": (2.00, 8.00),
    "o4-mini": (1.10, 4.40),
    "o3-mini": (1.10, 4.40),
    "o3": (2.00, 8.00),
    "claude-3-haiku": (0.25, 1.25),
    "claude-3-5-haiku": (0.80, 4.00),
    "claude-3-5-sonnet": (3.00, 15.00),
    "claude-3-7-sonnet": (3.00, 15.00),
    "claude-sonnet-4": (3.00, 15.00),
    "claude-opus-4": (15.00, 75.00),
}


def price_for(model: str) -> tuple[float, float]:
    """(input, output) USD per million tokens for ``model``; (0, 0) when not in the table."""
    best = ""
    for prefix in PRICES_USD_PER_MTOK:
        if model.startswith(prefix) and len(prefix) > len(best):
            best = prefix
    return PRICES_USD_PER_MTOK[best] if best else (0.0, 0.0)


def cost_usd(price: tuple[float, float], input_tokens: int, output_tokens: int) -> float:
    """Dollar cost of one call at ``price`` (USD per million input/output tokens)."""
    return (input_tokens * price[0] + output_tokens * price[1]) / 1_000_000


class BudgetExceeded(RuntimeError):
    """The episode's token or cost budget does not allow (or no longer allows) a model call.

    ``reply`` is the reply of the call that crossed the limit (None when refused before a call);
    ``log`` holds that call's request/response log so no attempt is lost from the record.
    """

    def __init__(self, message: str, *, reply: ModelReply | None = None,
                 log: list[dict[str, Any]] | None = None) -> None:
        super().__init__(message)
        self.reply = reply
        self.log = log if log is not None else (reply.log if reply is not None else [])


@dataclass
class Budget:
    """Token and dollar limits shared by all calls of one episode (None = no limit).

    ``max_tokens`` bounds input + output tokens summed over calls; ``max_cost_usd`` bounds the
    summed cost from the price table. Thread-safe.
    """

    max_tokens: int | None = None
    max_cost_usd: float | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    calls: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    @property
    def tokens(self) -> int:
        """Input plus output tokens charged so far."""
        return self.input_tokens + self.output_tokens

    def check_before(self, estimated_input_tokens: int, price: tuple[float, float]) -> None:
        """Raise :class:`BudgetExceeded` if a call with this prompt would certainly overrun."""
        with self._lock:
            if self.max_tokens is not None and self.tokens + estimated_input_tokens >= self.max_tokens:
                raise BudgetExceeded(
                    f"token budget: {self.tokens} of {self.max_tokens} used, the next prompt needs "
                    f"about {estimated_input_tokens} more; call refused")
            est_cost = cost_usd(price, estimated_input_tokens, 0)
            if self.max_cost_usd is not None and self.cost_usd + est_cost >= self.max_cost_usd:
                raise BudgetExceeded(
                    f"cost budget: ${self.cost_usd:.4f} of ${self.max_cost_usd:.4f} used, the next "
                    f"prompt costs about ${est_cost:.4f}; call refused")

    def charge(self, reply: ModelReply) -> None:
        """Add a finished call's usage; raise :class:`BudgetExceeded` (carrying it) if it overran."""
        with self._lock:
            self.input_tokens += reply.input_tokens
            self.output_tokens += reply.output_tokens
            self.cost_usd += reply.cost_usd
            self.calls += 1
            over = self._overrun()
        if over:
            raise BudgetExceeded(over + " after this call; its reply is attached", reply=reply)

    def _overrun(self) -> str:
        if self.max_tokens is not None and self.tokens > self.max_tokens:
            return f"token budget exceeded: {self.tokens} of {self.max_tokens} used"
        if self.max_cost_usd is not None and self.cost_usd > self.max_cost_usd:
            return f"cost budget exceeded: ${self.cost_usd:.4f} of ${self.max_cost_usd:.4f} used"
        return ""

    def as_dict(self) -> dict[str, Any]:
        """A JSON-safe snapshot for the episode record."""
        return {"max_tokens": self.max_tokens, "max_cost_usd": self.max_cost_usd,
                "input_tokens": self.input_tokens, "output_tokens": self.output_tokens,
                "cost_usd": self.cost_usd, "calls": self.calls}
