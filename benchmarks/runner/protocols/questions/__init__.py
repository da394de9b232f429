"""The questions run protocol: its suite schema, plan rows, play, report and CLI options, in one folder."""

from .protocol import QuestionsProtocol

__all__ = ["QuestionsProtocol"]
