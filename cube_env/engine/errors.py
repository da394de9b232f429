"""The engine's exceptions: one type for bad states, one for bad notation; and :func:`excerpt`, what a
message quotes of outside input, so no message grows with the input it complains about."""


class CubeInputError(ValueError):
    """Base class for any rejected outside input (states, move sequences)."""


class InvalidStateError(CubeInputError):
    """A state from outside is not a reachable cube; the message names the fault."""


class NotationError(CubeInputError):
    """A move sequence contains a token the notation does not know."""


def excerpt(text: str, limit: int) -> str:
    """``repr`` of ``text``, cut so that the quoted part shows at most ``limit`` characters.

    Whatever ``text`` holds (a megabyte, control characters that ``repr`` escapes), the result is
    at most ``limit + 2`` characters of quoted text, followed by ``…(N characters)`` when cut.
    """
    n = min(len(text), limit)
    while n > 0 and len(repr(text[:n])) > limit + 2:  # escapes (\x00, \ud800) take several characters
        n -= 1
    shown = repr(text[:n])
    return shown if n == len(text) else f"{shown}…({len(text)} characters)"
