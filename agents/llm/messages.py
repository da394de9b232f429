"""Provider-neutral chat messages, their conversion to each provider's wire format, and log sanitising.

A message is ``{"role": "system" | "user" | "assistant", "content": str | list[Part]}`` where a
part is ``{"type": "text", "text": str}`` or ``{"type": "image", "png": bytes}``. Agents build
these once; each client converts them to its provider's format (images become base64 content
parts). Logs never hold image bytes: :func:`sanitize` replaces every base64 image by its SHA-256
and byte length, so an episode record stays small and the image can be matched to the stored file.
"""

from __future__ import annotations

import base64
import hashlib
import re
from typing import Any, Mapping, Sequence, Union

__all__ = [
    "Message", "Part", "text_part", "image_part", "validate_messages", "to_openai",
    "to_anthropic", "sanitize", "image_ref", "estimate_tokens", "safe_text", "count_surrogates",
]

Part = dict[str, Any]
Message = Mapping[str, Any]
Content = Union[str, Sequence[Part]]

_ROLES = ("system", "user", "assistant")
_SURROGATE = re.compile("[\ud800-\udfff]")
_PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
#: Rough prompt-token cost of one image, used only for budget estimates before a call.
IMAGE_TOKEN_ESTIMATE = 800


def text_part(text: str) -> Part:
    """A text content part."""
    return {"type": "text", "text": text}


def image_part(png: bytes) -> Part:
    """An image content part holding PNG bytes."""
    return {"type": "image", "png": png}


def image_ref(png: bytes) -> dict[str, Any]:
    """What a log stores instead of an image: its SHA-256 hex digest and byte length."""
    return {"type": "image", "sha256": hashlib.sha256(png).hexdigest(), "bytes": len(png)}


def safe_text(text: str) -> str:
    """``text`` with every surrogate code point (U+D800-U+DFFF) written as its escape (``\\ud800``).

    A JSON reply may carry a lone surrogate (``"\\ud800"``), which a Python ``str`` holds but UTF-8
    cannot encode: left alone it would break the next request, the record and any output. The escape
    keeps what was sent visible (the same convention as the episode records). Other text is
    returned unchanged (the same object).
    """
    if _SURROGATE.search(text) is None:
        return text
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def count_surrogates(text: str) -> int:
    """How many surrogate code points :func:`safe_text` would replace in ``text``."""
    return len(_SURROGATE.findall(text))


def validate_messages(messages: Sequence[Message]) -> None:
    """Raise ``ValueError`` naming the first malformed message or part; nothing is sent before."""
    if not messages:
        raise ValueError("messages must not be empty")
    for i, msg in enumerate(messages):
        role = msg.get("role")
        if role not in _ROLES:
            raise ValueError(f"message {i}: role must be one of {_ROLES}, got {role!r}")
        content = msg.get("content")
        if isinstance(content, str):
            continue
        if not isinstance(content, (list, tuple)):
            raise ValueError(f"message {i}: content must be a str or a list of parts")
        for j, part in enumerate(content):
            _validate_part(part, f"message {i} part {j}")


def _validate_part(part: Any, where: str) -> None:
    kind = part.get("type") if isinstance(part, Mapping) else None
    if kind == "text":
        if not isinstance(part.get("text"), str):
            raise ValueError(f"{where}: a text part needs a str 'text'")
    elif kind == "image":
        png = part.get("png")
        if not isinstance(png, (bytes, bytearray)) or not bytes(png).startswith(_PNG_MAGIC):
            raise ValueError(f"{where}: an image part needs PNG bytes under 'png'")
    else:
        raise ValueError(f"{where}: part type must be 'text' or 'image', got {kind!r}")


def _parts(content: Content) -> list[Part]:
    return [text_part(content)] if isinstance(content, str) else list(content)


def _b64(png: bytes) -> str:
    return base64.b64encode(bytes(png)).decode("ascii")


def to_openai(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """Chat-completions messages; images become ``image_url`` parts with a PNG data URL.

    Text goes out through :func:`safe_text` (a lone surrogate cannot be sent as UTF-8)."""
    out = []
    for msg in messages:
        content = msg["content"]
        if isinstance(content, str):
            out.append({"role": msg["role"], "content": safe_text(content)})
            continue
        parts: list[dict[str, Any]] = []
        for part in content:
            if part["type"] == "text":
                parts.append({"type": "text", "text": safe_text(part["text"])})
            else:
                url = "data:image/png;base64," + _b64(part["png"])
                parts.append({"type": "image_url", "image_url": {"url": url}})
        out.append({"role": msg["role"], "content": parts})
    return out


def to_anthropic(messages: Sequence[Message]) -> tuple[str | None, list[dict[str, Any]]]:
    """Messages-API form: (system text or None, messages); images become base64 ``image`` blocks.

    Anthropic takes the system prompt as a separate field, so system messages (text only) are
    joined with blank lines in their original order. Text goes out through :func:`safe_text`.
    """
    system: list[str] = []
    out = []
    for msg in messages:
        if msg["role"] == "system":
            system.append(_text_only(msg["content"]))
            continue
        blocks: list[dict[str, Any]] = []
        for part in _parts(msg["content"]):
            if part["type"] == "text":
                blocks.append({"type": "text", "text": safe_text(part["text"])})
            else:
                source = {"type": "base64", "media_type": "image/png", "data": _b64(part["png"])}
                blocks.append({"type": "image", "source": source})
        out.append({"role": msg["role"], "content": blocks})
    return ("\n\n".join(system) if system else None), out


def _text_only(content: Content) -> str:
    parts = _parts(content)
    if any(p["type"] != "text" for p in parts):
        raise ValueError("a system message may only contain text")
    return safe_text("".join(p["text"] for p in parts))


def sanitize(value: Any, secrets: Sequence[str] = ()) -> Any:
    """A JSON-safe deep copy of ``value`` with images replaced by :func:`image_ref` and secrets masked.

    Recognises every image form this package produces: neutral ``{"type": "image", "png": …}``,
    OpenAI data URLs and Anthropic base64 sources. Each string in ``secrets`` (an API key) is masked
    as :func:`mask_secret` says. Every string, dict keys included, goes through :func:`safe_text`, so
    the copy always encodes as UTF-8.
    """
    if isinstance(value, Mapping):
        if value.get("type") == "image" and isinstance(value.get("png"), (bytes, bytearray)):
            return image_ref(bytes(value["png"]))
        if value.get("type") == "base64" and isinstance(value.get("data"), str):
            return {**_b64_ref(value["data"]), "media_type": value.get("media_type")}
        return {safe_text(str(k)): sanitize(v, secrets) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [sanitize(v, secrets) for v in value]
    if isinstance(value, (bytes, bytearray)):
        return image_ref(bytes(value))
    if isinstance(value, str):
        if value.startswith("data:") and ";base64," in value[:64]:
            return _b64_ref(value.split(",", 1)[1])
        for secret in secrets:
            value = mask_secret(value, secret)
        return safe_text(value)
    if value is None or isinstance(value, (bool, int, float)):
        return value
    return safe_text(repr(value))


MASK = "***"
LONG_SECRET = 12
"""A secret this long is masked wherever its text occurs (a real API key, 20 to 200 characters, never occurs
by chance); a shorter one (a local server's dummy key ``x``, ``none``) only where it is sent as a key
(:data:`_SENT_AS_KEY`): its text is also a cube rotation, a move, a reward's name, so masking every occurrence
would eat the log (``Action: ***``)."""
_TOKEN_CHAR = r"[A-Za-z0-9_\-]"
_SENT_AS_KEY = (r"(?i:\bbearer\s+|\b(?:x-)?api[-_ ]?key\b[^:=\n]{0,24}[:=]\s*[\"']?|[?&](?:api[-_]?)?key="
                r"|\b(?:access[-_])?token[\"']?\s*[:=]\s*[\"']?|\bauthorization[\"']?\s*[:=]\s*[\"']?(?:bearer\s+)?)")
"""Where a key stands as sent: an ``Authorization: Bearer`` header, an ``x-api-key`` header or ``api_key`` field,
a ``?key=`` query (also as an error message echoes them: "Incorrect API key provided: x")."""


def mask_secret(text: str, secret: str) -> str:
    """``text`` with ``secret`` replaced by ``***``: every occurrence of a secret of :data:`LONG_SECRET` or more
    characters; a shorter one only where it stands as a key is sent (:data:`_SENT_AS_KEY`) and no letter, digit,
    ``_`` or ``-`` follows it, so a key ``x``, ``y``, ``R`` or ``none`` never masks the cube notation or the
    words of a log."""
    if not secret:
        return text
    if len(secret) >= LONG_SECRET:
        return text.replace(secret, MASK)
    return re.sub(f"({_SENT_AS_KEY}){re.escape(secret)}(?!{_TOKEN_CHAR})", lambda m: m.group(1) + MASK, text)


def _b64_ref(data: str) -> dict[str, Any]:
    """:func:`image_ref` of base64 text; undecodable text is described by its length only."""
    try:
        return image_ref(base64.b64decode(data, validate=True))
    except ValueError:
        return {"type": "image", "sha256": None, "base64_chars": len(data)}


def estimate_tokens(messages: Sequence[Message]) -> int:
    """A rough prompt size (4 characters per token, a flat cost per image) for budget checks."""
    chars = 0
    images = 0
    for msg in messages:
        for part in _parts(msg["content"]):
            if part["type"] == "text":
                chars += len(part["text"])
            else:
                images += 1
    return chars // 4 + images * IMAGE_TOKEN_ESTIMATE
