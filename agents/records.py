"""Episode records: everything needed to replay what an agent saw and did."""

from __future__ import annotations

import base64
import hashlib
import io
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from .tools import ToolCall


def png_bytes(image: np.ndarray) -> bytes:
    """PNG encoding of an RGB uint8 image."""
    from PIL import Image

    buf = io.BytesIO()
    Image.fromarray(np.ascontiguousarray(image, dtype=np.uint8)).save(buf, format="PNG")
    return buf.getvalue()


@dataclass
class StepRecord:
    """One interaction step: the observation shown, the reply, the actions and their effects."""

    index: int
    observation_text: str
    observation_sha256: str
    observation_png_b64: str | None
    reply: str
    action: str
    tool_calls: list[ToolCall]
    moves: int
    reward: float
    input_tokens: int
    output_tokens: int
    cost_usd: float
    latency_s: float
    error: str | None
    model_log: list[dict[str, Any]] = field(default_factory=list)
    distance: int | None = None
    parse_error: str | None = None
    """The model's reply was malformed (see :attr:`cubebench.agents.base.Turn.parse_error`); ``error`` is
    kept for failures of the agent, its model client or the infrastructure."""


@dataclass
class EpisodeRecord:
    """A whole episode, with its configuration, its steps and its outcome.

    ``status`` is ``solved``, ``failed`` (budget used or done() without
    solving; malformed replies included: they are the model's failures) or
    ``error`` (the agent, its model client or the infrastructure kept
    failing, or a budget was spent; the steps recorded up to then are kept).
    ``errors`` counts steps with such a failure, ``parse_errors`` steps whose
    reply was malformed.
    """

    agent: str
    config: dict[str, Any]
    start_facelets: str
    steps: list[StepRecord] = field(default_factory=list)
    status: str = "failed"
    solved: bool = False
    n_steps: int = 0
    n_moves: int = 0
    n_rotations: int = 0
    total_reward: float = 0.0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    wall_s: float = 0.0
    end_facelets: str = ""
    distance_start: int | None = None
    distance_end: int | None = None
    errors: int = 0
    parse_errors: int = 0

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-serialisable form."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "EpisodeRecord":
        steps = [
            StepRecord(**{**s, "tool_calls": [ToolCall(**c) for c in s["tool_calls"]]}) for s in data["steps"]
        ]
        return cls(**{**data, "steps": steps})


def observation_digest(text: str, image: np.ndarray | None, store_image: bool) -> tuple[str, str | None]:
    """SHA-256 of what was shown (text and image bytes) and the image as base64 PNG if stored."""
    h = hashlib.sha256(text.encode())
    png_b64 = None
    if image is not None:
        h.update(np.ascontiguousarray(image).tobytes())
        if store_image:
            png_b64 = base64.b64encode(png_bytes(image)).decode()
    return h.hexdigest(), png_b64
