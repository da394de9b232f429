"""What a model call ends in: a :class:`ModelReply`, or a :class:`ModelError`.

Both sit below the clients (which build them) and the budget (which charges replies), so the
budget does not import any client.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

__all__ = ["MalformedReply", "ModelError", "ModelReply"]


class ModelError(RuntimeError):
    """A model call failed for good: a non-retryable HTTP error, a missing key, or retries ran out.

    ``status`` is the last HTTP status (None for transport failures), ``kind`` a short label
    (``client_error``, ``rate_limit``, ``server_error``, ``timeout``, ``connection``,
    ``malformed``, ``config``), and ``log`` holds every attempt made, for the episode record.
    """

    def __init__(self, message: str, *, status: int | None = None, kind: str = "error",
                 log: list[dict[str, Any]] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.kind = kind
        self.log: list[dict[str, Any]] = log if log is not None else []


class MalformedReply(ModelError):
    """A model call failed for good because the server's replies were not well-formed replies.

    An HTTP 200 whose body is not JSON, or is JSON of the wrong shape (no ``choices``, content
    that is a number or a list where text belongs, ``usage`` that is not an object of non-negative
    integer counts, ...). Each such attempt is logged with ``error_kind`` ``malformed`` and
    retried; this is raised when the last attempt was one too. ``kind`` is always ``malformed``.
    """

    def __init__(self, message: str, *, status: int | None = None,
                 log: list[dict[str, Any]] | None = None) -> None:
        super().__init__(message, status=status, kind="malformed", log=log)


@dataclass
class ModelReply:
    """The outcome of one ``complete`` call.

    ``finish_reason`` is normalised to ``stop`` (natural end or stop sequence) and ``length``
    (token limit); other provider reasons pass through. ``latency_s`` is the wall time of the
    whole call including retries and waits; each attempt's own latency is in ``log``.
    ``cost_usd`` comes from the price table (0 for unknown models).  ``reply_cut`` says what was cut of a reply
    longer than the request's token limit allows (:mod:`.reply_bound`; ``text`` holds what was kept), else None.
    """

    text: str
    finish_reason: str
    input_tokens: int
    output_tokens: int
    latency_s: float
    cost_usd: float
    attempts: int
    model: str = ""
    provider: str = ""
    log: list[dict[str, Any]] = field(default_factory=list)
    reply_cut: str | None = None

    def as_record(self) -> dict[str, Any]:
        """A JSON-safe dict of every field (the log included) for the episode record."""
        return asdict(self)
