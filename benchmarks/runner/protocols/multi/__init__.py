"""The multi run protocol: its suite schema, plan rows, play, report and CLI options, in one folder."""

from .protocol import MultiProtocol

__all__ = ["MultiProtocol"]
