"""``cubebench export``: a run's episodes as JSON Lines (full records) or CSV (one summary row each)."""

from __future__ import annotations

import csv
from dataclasses import asdict
from typing import TextIO

from .protocols import protocol_named
from .store import RunStore, record_json


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


def export_csv(store: RunStore, out: TextIO) -> int:
    """One row per stored episode, item or game, with the columns the run's protocol names
    (:attr:`~.protocols.RunProtocol.csv_columns`: each header says what the column holds there), its values as the
    report counts them (a question item with nothing to recover: ``uncounted``, neither passed nor failed); returns
    the count."""
    protocol = protocol_named(store.protocol)
    columns, uncounted = protocol.csv_columns, protocol.uncounted(store)
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow([header for _, header in columns])
    rows = store.rows()
    for row in rows:
        values = protocol.csv_values(asdict(row), row.key in uncounted)
        writer.writerow([values[column] for column, _ in columns])
    return len(rows)
