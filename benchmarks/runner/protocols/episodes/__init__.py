"""The episodes run protocol: its suite schema, plan rows, play, report and CLI options, in one folder."""

from .protocol import EpisodesProtocol

__all__ = ["EpisodesProtocol"]
