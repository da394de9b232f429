"""``cubebench export``: a run's episodes as JSON Lines (full records) or CSV (one summary row each)."""

from __future__ import annotations

import csv
import json
from dataclasses import asdict
from typing import TextIO

from .store import SUMMARY_COLUMNS, RunStore, _jsonable

def export_jsonl(store: RunStore, out: TextIO, images: bool = True) -> int:
    """One line per episode: ``{"key": ..., "record": <EpisodeRecord.to_dict()>}``; returns the count."""
    n = 0
    for key, record in store.records():
        data = record.to_dict()
        if not images:
            for step in data["steps"]:
                step["observation_png_b64"] = None
        out.write(json.dumps({"key": key, "record": data}, default=_jsonable) + "\n")
        n += 1
    return n


def export_csv(store: RunStore, out: TextIO) -> int:
    """The summary columns of every episode (``SUMMARY_COLUMNS``); returns the count."""
    writer = csv.DictWriter(out, fieldnames=list(SUMMARY_COLUMNS), lineterminator="\n")
    writer.writeheader()
    rows = store.rows()
    for row in rows:
        writer.writerow(asdict(row))
    return len(rows)
