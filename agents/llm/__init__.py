"""Model clients for the LLM agents: one interface, OpenAI-compatible and Anthropic back ends,
retries and budgets, a scripted loopback server for tests, and an embedded local model.

See ``docs/llm.md``. The provider libraries are imported only when a client is built, so this
package imports without the ``llm`` extra.
"""

from .budget import PRICES_USD_PER_MTOK, Budget, BudgetExceeded, price_for
from .clients import (AnthropicClient, LocalModelClient, ModelClient, ModelError, ModelReply,
                      OpenAIChatClient, make_client)
from .grammar import TOOLS, react_grammar, react_pattern
from .messages import image_part, image_ref, sanitize, text_part
from .retry import RetryPolicy
from .scripted_server import RecordedRequest, ScriptedServer, Step

__all__ = [
    "AnthropicClient", "Budget", "BudgetExceeded", "LocalModelClient", "ModelClient", "ModelError",
    "ModelReply", "OpenAIChatClient", "PRICES_USD_PER_MTOK", "RecordedRequest", "RetryPolicy",
    "ScriptedServer", "Step", "TOOLS", "image_part", "image_ref", "make_client", "price_for",
    "react_grammar", "react_pattern", "sanitize", "text_part",
]
