"""The engine's exceptions: one type for bad states, one for bad notation."""


class CubeInputError(ValueError):
    """Base class for any rejected outside input (states, move sequences)."""


class InvalidStateError(CubeInputError):
    """A state from outside is not a reachable cube; the message names the fault."""


class NotationError(CubeInputError):
    """A move sequence contains a token the notation does not know."""
