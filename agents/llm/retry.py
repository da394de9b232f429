"""Retry policy for model calls: exponential backoff with jitter, honouring ``Retry-After``.

The clients turn the libraries' own retries off (``max_retries=0``) and retry here instead, so
each attempt is visible in the reply's log. Which failures are retried is decided by the client
(429, 408, 409, 5xx, timeouts, dropped connections, malformed bodies); this module only says
how long to wait and how often to try.
"""

from __future__ import annotations

import email.utils
import math
import random
import time
from dataclasses import dataclass
from typing import Mapping

__all__ = ["RetryPolicy", "parse_retry_after", "RETRYABLE_STATUS"]

#: HTTP statuses worth retrying: timeouts, conflicts, rate limits and server errors.
RETRYABLE_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504, 529})


@dataclass(frozen=True)
class RetryPolicy:
    """How many attempts and how long to wait between them.

    The wait before retry ``n`` (1-based) is ``min(max_delay_s, base_delay_s * 2**(n-1))`` scaled
    by a uniform factor in ``[1 - jitter, 1]`` ("equal jitter", so concurrent episodes spread out).
    A server's ``Retry-After`` replaces the backoff when present, capped at ``max_retry_after_s``.
    Tests set tiny delays; nothing here sleeps by itself.
    """

    max_attempts: int = 5
    base_delay_s: float = 0.5
    max_delay_s: float = 30.0
    jitter: float = 0.5
    max_retry_after_s: float = 60.0

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise ValueError("max_attempts must be at least 1")
        if not 0.0 <= self.jitter <= 1.0:
            raise ValueError("jitter must be in [0, 1]")
        if self.base_delay_s < 0 or self.max_delay_s < 0 or self.max_retry_after_s < 0:
            raise ValueError("delays must be non-negative")

    def delay(self, retry: int, retry_after_s: float | None, rng: random.Random) -> float:
        """Seconds to wait before retry number ``retry`` (1 = the first retry)."""
        if retry_after_s is not None:
            return min(max(retry_after_s, 0.0), self.max_retry_after_s)
        backoff = min(self.max_delay_s, self.base_delay_s * 2 ** (retry - 1))
        return backoff * (1.0 - self.jitter * rng.random())


def parse_retry_after(headers: Mapping[str, str] | None) -> float | None:
    """Seconds from ``retry-after-ms``, or ``Retry-After`` as seconds or an HTTP date; else None."""
    if not headers:
        return None
    lower = {k.lower(): v for k, v in headers.items()}
    for key, divisor in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        raw = lower.get(key)
        if raw is None:
            continue
        try:
            value: float | None = float(raw) / divisor
        except ValueError:
            value = _http_date_seconds(raw) if key == "retry-after" else None
        if value is not None and math.isfinite(value):
            return max(value, 0.0)
    return None


def _http_date_seconds(raw: str) -> float | None:
    try:
        when = email.utils.parsedate_to_datetime(raw)
    except (TypeError, ValueError):
        return None
    return when.timestamp() - time.time()
