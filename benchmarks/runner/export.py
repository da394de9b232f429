"""``cubebench export``: a run's episodes as JSON Lines (full records) or CSV (one summary row each)."""

from __future__ import annotations

import csv
from dataclasses import asdict
from typing import TextIO

from .store import SUMMARY_COLUMNS, RunStore, record_json

def export_jsonl(store: RunStore, out: TextIO, images: bool = True) -> int:
    """One line per episode: ``{"key": ..., "record": <EpisodeRecord.to_dict()>}``; returns the count."""
    n = 0
    for key, record in store.records():
        data = record.to_dict()
        if not images:
            for step in data["steps"]:
                step["observation_png_b64"] = None
        out.write(record_json({"key": key, "record": data}) + "\n")
        n += 1
    return n


_SHARED = (("status", "status"), ("input_tokens", "input_tokens"), ("output_tokens", "output_tokens"),
           ("cost_usd", "cost_usd"), ("wall_s", "wall_s"), ("distance_start", "distance_start"),
           ("distance_end", "distance_end"))
CSV_COLUMNS: dict[str, tuple[tuple[str, str], ...]] = {
    "episodes": tuple((column, column) for column in SUMMARY_COLUMNS),
    "questions": (("key", "key"), ("tier", "test"), ("depth", "depth"), ("instance", "index"),
                  ("reward", "variant"), ("solved", "passed"), ("n_steps", "questions"), ("n_moves", "moves"),
                  *_SHARED),
    "multi": (("key", "key"), ("tier", "game"), ("depth", "depth"), ("instance", "instance"), ("reward", "view"),
              ("setting", "seat"), ("solved", "passed"), ("n_steps", "turns"), ("n_moves", "face_turns"), *_SHARED),
}
"""Per protocol, ``(summary column, CSV header)`` in CSV order: each header names what the column holds in
that protocol (the store keeps one set of columns for all three: its module docstring maps them).  A
question's ``depth`` is its depth, or the ladder level it was asked at; ``questions`` counts the questions
asked, ``moves`` the moves a closed-loop or recovery item made; a game's ``turns`` counts seat turns and
``face_turns`` the face turns played; ``seat`` is the seat the agent held alone, or ``team``."""


def export_csv(store: RunStore, out: TextIO) -> int:
    """One row per stored episode, item or game, with the columns :data:`CSV_COLUMNS` names for the run's
    protocol; returns the count."""
    columns = CSV_COLUMNS[store.protocol]
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow([header for _, header in columns])
    rows = store.rows()
    for row in rows:
        values = asdict(row)
        writer.writerow([values[column] for column, _ in columns])
    return len(rows)
