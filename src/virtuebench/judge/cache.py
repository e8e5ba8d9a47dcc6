"""The verdict cache: every LLM verdict (a judge's, a curation filter's decision), kept in the shared entry store.

Keyed by judge model, prompt hash, question, ground truth and response: an unchanged rerun asks the API nothing, and
changed responses are judged anew. One file per verdict (support/store.py): safe for many jobs on many hosts of a
shared filesystem, where SQLite's locking is not. Only valid verdicts are stored, so a failure is retried on the next
run. A cache of an older version (one SQLite file, `.sqlite`) is read into the store once, so that no verdict it holds
is paid for again.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from virtuebench.records import stable_hash
from virtuebench.support.store import Store

KIND = "verdicts"
#: The folder inside a cache's store root that says which SQLite caches were read into it already.
IMPORTED = ".imported"


class VerdictCache:
    """The verdicts under `path`, a store root (`<path>/verdicts/`). A path ending in `.sqlite` names an older version's
    cache: its verdicts are read into the store beside it (`path` without the suffix) once, and kept there."""

    def __init__(self, path: str | Path):
        path = Path(path)
        if path.suffix == ".sqlite":
            legacy, path = path, path.with_suffix("")
            self.store = Store(path, KIND)
            import_sqlite(legacy, self.store)
        else:
            self.store = Store(path, KIND)
        self.path = path

    @staticmethod
    def key(judge_model: str, prompt_hash: str, question: str, answer: str, response: str) -> str:
        return stable_hash([judge_model, prompt_hash, question, answer, response], length=32)

    def get(self, key: str) -> dict[str, Any] | None:
        value = self.store.get(key)
        return value["verdict"] if value is not None else None

    def put(self, key: str, judge_model: str, prompt_hash: str, verdict: dict[str, Any]) -> None:
        self.store.put(key, {"verdict": verdict}, about={"judge_model": judge_model, "prompt_hash": prompt_hash})

    def __len__(self) -> int:
        return sum(1 for _ in self.store.folder.glob("*/*.json"))

    def close(self) -> None:
        """Nothing to close (kept for the callers of the SQLite version)."""


def import_sqlite(path: str | Path, store: Store) -> int:
    """Read an older version's SQLite verdict cache into `store`, once (a marker names the file read); the number of
    verdicts read. A missing file reads nothing; an unreadable one is left alone (its verdicts are asked again)."""
    path = Path(path)
    if not path.is_file():
        return 0
    marker = store.root / IMPORTED / f"{stable_hash(str(path.resolve()), length=16)}.done"
    if marker.exists():
        return 0
    try:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as database:
            rows = database.execute("SELECT key, judge_model, prompt_hash, verdict FROM verdicts").fetchall()
    except sqlite3.Error:
        return 0
    for key, judge_model, prompt_hash, verdict in rows:
        if store.get(key) is None:
            store.put(key, {"verdict": json.loads(verdict)}, about={"judge_model": judge_model, "prompt_hash": prompt_hash})
    marker.parent.mkdir(parents=True, exist_ok=True)
    marker.write_text(f"{path}\n{len(rows)} verdicts\n")
    return len(rows)
